"""스크립트가 보는 sys.argv, __name__, sys.path[0]을 씁니다."""

import os
import sys

print(__name__, sys.argv, os.path.basename(sys.path[0]))
