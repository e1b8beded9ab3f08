"""GPU 전용 페이지(레지스트리 requires = "cuda")의 '참고: 공개된 수치' 상자는 CPU 결과 표보다
먼저 옵니다(이슈 41 항목 3). 결과는 <!-- results --> 자리에 그려지므로, 상자가 그 표시보다 앞에
있어야 GPU 독자가 CPU 표를 지나지 않고 바깥 수치를 봅니다."""

from pathlib import Path

import pytest

from guide import registry

DOCS = Path(__file__).resolve().parent.parent / "docs"
BOX = '!!! note "참고: 공개된 수치"'
MARKER = "<!-- results -->"


def box_after_results(text):
    return BOX in text and MARKER in text and text.index(BOX) > text.index(MARKER)


@pytest.mark.parametrize(
    "page", [p for p in registry.load() if p.requires == "cuda"], ids=lambda p: p.id
)
def test_published_figures_come_before_the_results_on_gpu_only_pages(page):
    text = (DOCS / page.doc).read_text(encoding="utf-8")
    assert MARKER in text
    assert not box_after_results(text)


def test_the_order_check_can_fail():
    assert box_after_results(f"{MARKER}\n\n{BOX}\n    본문\n")
    assert not box_after_results(f"{BOX}\n    본문\n\n{MARKER}\n")
