"""측정하는 페이지마다 만드는 노트북의 테스트: 스니펫과 같은 코드인지, CPU에서 끝까지 실행되는지."""

import json

import pytest

from guide import registry
from hooks.notebooks import build_notebook, cli_function, split_module
from tests.site_build import ROOT, mkdocs_build

PAGES = registry.load()


def code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_notebook_code_is_the_snippet_code(page):
    module = page.snippet_path
    notebook = build_notebook(page, "../tips/page.html")
    cells = [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"]
    source = module.read_text(encoding="utf-8")
    assert notebook["cells"][0]["source"].startswith(f"# {page.heading} 노트북")
    if page.run_as_script:
        # 여러 프로세스를 띄우는 모듈은 모듈 전체를 파일로 쓰고 실행합니다(구역 표시 줄만 빼고).
        assert cells[0].startswith("%%writefile _cli.py")
        assert "# --8<--" not in cells[1]
        assert code_lines(cells[1].partition("\n")[2]) == [
            line for line in code_lines(source) if not line.strip().startswith("# --8<--")
        ]
        return
    _, chunks = split_module(source)
    expected = code_lines("\n".join(code for _, code in chunks))
    expected += code_lines(cli_function("pick_device")) + ["main(pick_device())"]
    assert code_lines("\n".join(cells)) == expected
    # 구역 표시 줄과 `if __name__ == "__main__":` 블록은 노트북에 들어가지 않습니다.
    assert "# --8<--" not in "\n".join(cells) and "__main__" not in "\n".join(cells)


def test_notebook_pages_say_whether_their_outputs_were_executed():
    page = PAGES[0]
    assert "출력이 없습니다" in build_notebook(page, "x.html", executed=False)["cells"][0]["source"]
    assert "빌드한 컴퓨터" in build_notebook(page, "x.html", executed=True)["cells"][0]["source"]


def test_every_measured_page_has_a_notebook_page_and_download(built_site):
    for page in PAGES:
        stem = page.snippet
        notebook_page = built_site / "notebooks" / f"{stem}.html"
        html = notebook_page.read_text(encoding="utf-8")
        assert "노트북 내려받기(.ipynb)" in html and "# --8&lt;--" not in html, stem
        downloaded = json.loads((built_site / "notebooks" / f"{stem}.ipynb").read_text())
        assert downloaded["nbformat"] == 4


def test_every_notebook_runs_on_cpu_when_the_site_is_built_with_execution(tmp_path):
    # 배포용 빌드와 같은 설정입니다. 셀이 하나라도 실패하면 빌드가 멈춥니다(allow_errors: false).
    site = tmp_path / "site"
    result = mkdocs_build(ROOT, site, EXECUTE_NOTEBOOKS="true", NOTEBOOK_CACHE="false")
    assert result.returncode == 0, result.stderr[-3000:]
    for page in PAGES:
        html = (site / "notebooks" / f"{page.snippet}.html").read_text(encoding="utf-8")
        # main()은 맨 먼저 어느 장치에서 실행하는지 출력합니다. 그 출력이 페이지에 있어야 합니다.
        assert "장치: cpu" in html, page.snippet
        assert "Traceback" not in html, page.snippet
