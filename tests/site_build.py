"""테스트들이 함께 쓰는 사이트 빌드 도우미입니다."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mkdocs_build(project: Path, site_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict`를 별도 프로세스로 실행합니다. env로 환경 변수를 더할 수 있습니다."""
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)]
    return subprocess.run(command, cwd=project, env=full_env, capture_output=True, text=True)


def section_lines(source: str, name: str) -> str:
    """pymdownx.snippets처럼 구역 안의 줄을 꺼내고, 안쪽의 다른 구역 표시는 뺍니다."""
    lines = source.splitlines()
    start = lines.index(f"# --8<-- [start:{name}]")
    end = lines.index(f"# --8<-- [end:{name}]")
    body = [line for line in lines[start + 1 : end] if "# --8<-- [" not in line]
    return textwrap.dedent("\n".join(body))
