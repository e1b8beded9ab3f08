"""한국어 튜토리얼 줄: 주제가 같은 tutorials.pytorch.kr 문서가 있는 페이지마다 한 줄.

주소는 PyTorchKorea/tutorials-kr 저장소에서 확인한 경로만 씁니다. 오타 난 주소나 한 페이지에 두 번
들어간 줄은 실패합니다.
"""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
BASE = "https://tutorials.pytorch.kr/"
CONFIRMED = {
    "tips/05-ddp.md": "intermediate/ddp_tutorial.html",
    "tips/06-16bit.md": "recipes/recipes/amp_recipe.html",
    "tips/07-profiler.md": "recipes/recipes/profiler.html",
    "beyond/01-torch-compile.md": "intermediate/torch_compile_tutorial.html",
    "beyond/05-sdpa.md": "intermediate/scaled_dot_product_attention_tutorial.html",
    "beyond/06-channels-last.md": "intermediate/memory_format_tutorial.html",
    "checklist.md": "recipes/recipes/tuning_guide.html",
}
LINE = re.compile(r"^\*\*한국어 튜토리얼\*\*: \[[^\]]+\]\((\S+)\)$", re.MULTILINE)


def problems(page, text):
    found = LINE.findall(text)
    if len(found) != 1:
        return [f"{page}: 한국어 튜토리얼 줄이 {len(found)}개"]
    if found[0] != BASE + CONFIRMED[page]:
        return [f"{page}: 확인하지 않은 주소 {found[0]}"]
    return []


def test_each_page_with_a_korean_tutorial_links_it_once():
    for page in CONFIRMED:
        assert problems(page, (DOCS / page).read_text(encoding="utf-8")) == []


def test_the_check_fails_on_a_wrong_address_or_a_missing_line():
    text = (DOCS / "tips/06-16bit.md").read_text(encoding="utf-8")
    assert problems("tips/06-16bit.md", text.replace("amp_recipe", "amp_recipes"))
    assert problems("tips/06-16bit.md", text.replace("**한국어 튜토리얼**", "한국어 튜토리얼"))
