"""MkDocs 훅: Markdown 표를 키보드로 닿고 이름이 있는 스크롤 영역으로 감쌉니다(P11).

좁은 화면에서 넓은 표는 그 안에서 옆으로 스크롤되는데, 스크롤되는 영역은 키보드로 초점을 받을 수
있어야 하고(axe scrollable-region-focusable) 화면 낭독기가 읽을 이름이 있어야 합니다. Material도
표를 감싸지만 초점을 받지 않습니다.
"""

from __future__ import annotations

import re
from collections import Counter
from html import escape, unescape

# 제목, 템플릿이 이미 감싼 표(hooks/templates/), Markdown 표를 문서 순서대로 찾습니다.
TABLE_OR_HEADING = re.compile(
    r"<h[1-6]\b[^>]*>(?P<heading>.*?)</h[1-6]>"
    r'|<section class="table-scroll".*?</table>'
    r"|(?P<table><table>.*?</table>)",
    re.S,
)


def _plain(fragment: str) -> str:
    text = unescape(re.sub(r"<[^>]+>", "", fragment)).replace("¶", "")
    return " ".join(text.split())


def scrollable_tables(content: str) -> str:
    """이름은 바로 앞 제목에서 가져오고, 같은 제목 아래 표가 여럿이면 번호를 붙여 랜드마크 이름이
    겹치지 않게 합니다."""
    heading, used = "", Counter()

    def wrap(match: re.Match[str]) -> str:
        nonlocal heading
        if match["heading"] is not None:
            heading = _plain(match["heading"])
        if match["table"] is None:
            return match[0]
        label = f"{heading} 표" if heading else "표"
        used[label] += 1
        if used[label] > 1:
            label = f"{label} {used[label]}"
        return (
            f'<section class="table-scroll" tabindex="0" aria-label="{escape(label)}">'
            f"{match['table']}</section>"
        )

    return TABLE_OR_HEADING.sub(wrap, content)


def on_page_content(html: str, page, config, files) -> str:
    if not page.file.src_uri.endswith(".md"):  # 노트북 페이지에는 Markdown 표가 없습니다
        return html
    return scrollable_tables(html)
