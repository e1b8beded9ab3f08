"""빌드 시점 렌더링: 팁 페이지의 `<!-- results: tipN -->` 자리에 측정 결과를 그립니다.

이 훅은 결과를 읽어서 그리기만 하고, 절대 측정하지 않습니다. 아직 `results/`에 결과 파일이
없으므로 지금은 그 사실을 그대로 알리는 안내 상자를 그립니다.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"^<!--\s*results:\s*(?P<tip>tip[1-7])\s*-->[ \t]*$", re.MULTILINE)

NOT_YET_MEASURED = """!!! info "측정 결과"
    이 팁의 측정 결과는 아직 `results/`에 없습니다. 결과 파일이 생기면 빌드할 때 이 자리에
    표와 차트, 그리고 측정한 장치와 버전 정보가 그려집니다. 숫자를 직접 손으로 적지 않습니다.
"""


def render_results(match: re.Match[str]) -> str:
    return NOT_YET_MEASURED


def on_page_markdown(markdown: str, page, config, files) -> str:
    return MARKER.sub(render_results, markdown)
