"""페이지의 "(✓ 테스트: 파일::테스트)" 표시를 확인합니다(P10).

모든 표시가 있는 테스트를 가리키는지, 이름이 없거나 없는 테스트를 가리키는 표시가 빌드를
멈추는지, 빌드한 페이지에서 테스트로 가는 링크가 되는지 봅니다.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from hooks import marks
from tests.site_build import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
# 표시 하나를 이루는 글자. "(✓"로 시작하는 것은 모두 표시로 봅니다(이름이 없어도).
ANY = re.compile(r"\(✓[^)]*\)")


def page_id(path):
    return str(path.relative_to(DOCS))


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_mark_names_an_existing_test(page):
    text = page.read_text(encoding="utf-8")
    assert marks.problems(text) == []
    # 훅이 보는 형식과 다른 표시(예: "(✓ test_x)")도 없어야 합니다. 있으면 빌드가 놓칩니다.
    for found in ANY.findall(text):
        assert marks.MARK.fullmatch(found), f"{page_id(page)}: {found}"


def test_the_pages_carry_named_marks():
    named = [m for page in PAGES for m in marks.MARK.finditer(page.read_text(encoding="utf-8"))]
    assert len(named) >= 30
    assert any(m["cuda"] for m in named)  # CUDA에서만 확인하는 문장도 그렇다고 밝힙니다.


@pytest.mark.parametrize(
    ("mark", "expected"),
    [
        ("(✓ 테스트)", "확인하는 테스트의 이름이 없습니다"),
        ("(✓ 테스트, CUDA)", "확인하는 테스트의 이름이 없습니다"),
        ("(✓ 테스트: test_tip4_create_on_device.py)", "확인하는 테스트의 이름이 없습니다"),
        (
            "(✓ 테스트: test_tip4_create_on_device.py::test_no_such_test)",
            "tests/test_tip4_create_on_device.py에 test_no_such_test 테스트가 없습니다",
        ),
        (
            "(✓ 테스트: test_no_such_file.py::test_anything)",
            "tests/test_no_such_file.py에 test_anything 테스트가 없습니다",
        ),
        # 괄호 가운데에 끼운 표시는 빌드가 링크로 바꾸지 못합니다(이슈 40: 융합 옵티마이저 페이지).
        (
            "(miss 0, ✓ 테스트: test_beyond_compile.py::test_cold_compile)",
            "확인하는 테스트의 이름이 없습니다",
        ),
        # 테스트가 아닌 함수(pytest가 모으지 않는 이름)는 확인하는 테스트가 아닙니다.
        (
            "(✓ 테스트: test_tip1_num_workers.py::all_batches)",
            "tests/test_tip1_num_workers.py에 all_batches 테스트가 없습니다",
        ),
    ],
)
def test_problems_finds_unnamed_and_missing_marks(mark, expected):
    found = marks.problems(f"문장입니다{mark}.\n")
    assert len(found) == 1 and expected in found[0]


def test_existing_test_names_are_found_with_and_without_class():
    assert marks.test_exists("test_marks.py", "test_problems_finds_unnamed_and_missing_marks")
    assert marks.test_exists("test_marks.py", "TestPlantedClass::test_method_inside_a_class")
    assert not marks.test_exists("test_marks.py", "TestPlantedClass::test_no_such_method")


class TestPlantedClass:
    """`Class::test` 형식의 표시를 확인하려고 둔 클래스입니다."""

    def test_method_inside_a_class(self):
        assert marks.MARK.fullmatch("(✓ 테스트: test_marks.py::TestPlantedClass::test_x)")


@pytest.mark.parametrize(
    ("mark", "expected"),
    [
        ("(✓ 테스트)", "확인하는 테스트의 이름이 없습니다"),
        (
            "(✓ 테스트, CUDA: test_tip4_create_on_device.py::test_no_such_test)",
            "test_no_such_test 테스트가 없습니다",
        ),
    ],
    ids=["unnamed", "missing-test"],
)
def test_a_bad_mark_stops_the_build_naming_the_page(mark, expected):
    # 빌드가 부르는 훅(mkdocs.yml의 hooks)을 같은 프로세스에서 페이지 하나에 부릅니다.
    assert "  - hooks/marks.py\n" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    source = (ROOT / "docs" / "tips" / "04-create-on-device.md").read_text(encoding="utf-8")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="tips/04-create-on-device.md"))
    config = SimpleNamespace(extra={"repository": "https://example.org/repo"})
    assert "test-mark" in marks.on_page_markdown(source, page, config, None)
    with pytest.raises(PluginError) as caught:
        marks.on_page_markdown(source + f"\n이 문장은 확인됩니다{mark}.\n", page, config, None)
    assert "tips/04-create-on-device.md" in str(caught.value)
    assert expected in str(caught.value)


def test_marks_render_as_links_to_the_test(built_site):
    html = (built_site / "tips" / "04-create-on-device.html").read_text(encoding="utf-8")
    test_id = "tests/test_tip4_create_on_device.py::test_article_code_fails_as_the_page_says"
    link = re.search(
        r'<a class="test-mark" href="([^"]+)" title="이 문장을 확인하는 테스트: '
        + re.escape(test_id)
        + r'">✓ 테스트</a>',
        html,
    )
    assert link, "표시가 테스트로 가는 링크가 되지 않았습니다"
    assert link[1].endswith("/blob/main/tests/test_tip4_create_on_device.py")
    # 표시의 원래 글자("(✓ 테스트: …::…)")는 페이지에 남지 않습니다.
    assert "✓ 테스트: test_" not in html


def test_cuda_marks_say_so_in_the_built_page(built_site):
    html = (built_site / "tips" / "06-16bit.html").read_text(encoding="utf-8")
    cuda = re.search(r'<a class="test-mark" [^>]*title="([^"]+)">✓ 테스트, CUDA</a>', html)
    assert cuda and "CUDA GPU가 있는 컴퓨터에서만 실행" in cuda[1]
