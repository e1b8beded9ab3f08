"""규칙이 가리키는 사이트 페이지의 제목과 주소. torch를 가져오지 않습니다.

설치한 torchdoctor에는 사이트의 레지스트리(guide/pages.toml)가 없으므로 레지스트리에서 만든 작은
표(pages.json)를 꾸러미에 넣습니다. 손으로 적지 않습니다: `python -m torchdoctor.pages`가
레지스트리에서 다시 쓰고, tests/test_doctor_pages.py가 표를 guide/registry.py의 id, 제목(heading),
문서 경로와 견주어 레지스트리가 바뀌면 실패합니다(표가 낡지 않게).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

# 이 저장소(mkdocs.yml의 extra.repository 기본값)를 GitHub Pages가 배포하는 주소입니다.
SITE = "https://pytorch-kr.github.io/seven-tips/"

TABLE = Path(__file__).with_name("pages.json")


@functools.cache
def table() -> dict[str, tuple[str, str]]:
    """페이지 id → (메뉴와 H1의 제목, 사이트 안의 주소). 규칙이 가리키는 페이지만 담습니다."""
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    return {page: (title, path) for page, (title, path) in data.items()}


def url_path(doc: str) -> str:
    """문서 경로(tips/03-avoid-syncs.md) → 사이트 안의 주소(tips/03-avoid-syncs.html). 사이트는
    offline 플러그인으로 빌드해 폴더 주소가 아니라 .html 파일 주소를 씁니다."""
    return doc.removesuffix(".md") + ".html"


def title(page: str) -> str:
    return table()[page][0] if page in table() else page


def url(page: str) -> str | None:
    return SITE + table()[page][1] if page in table() else None


def label(page: str) -> str:
    """보고서에 쓰는 페이지 이름: 제목과 주소."""
    address = url(page)
    return f"{title(page)} ({address})" if address else page


def rebuild() -> None:
    """저장소 안에서만: 레지스트리에서 규칙이 가리키는 페이지의 표를 다시 씁니다."""
    from guide import registry
    from torchdoctor.catalog import RULES

    wanted = {rule.page for rule in RULES}
    data = {p.id: [p.heading, url_path(p.doc)] for p in registry.load() if p.id in wanted}
    TABLE.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    rebuild()
