"""팁마다 만드는 노트북의 테스트: 스니펫과 같은 코드인지, CPU에서 끝까지 실행되는지 봅니다."""

import json
import re

import pytest

from hooks.notebooks import build_notebook, split_module, tip_modules
from tests.site_build import ROOT, mkdocs_build

MODULES = tip_modules(ROOT)


def code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_every_tip_has_a_notebook():
    assert [m.stem[:4] for m in MODULES] == [f"tip{n}" for n in range(1, 8)]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.stem)
def test_notebook_code_is_the_snippet_code(module):
    notebook = build_notebook(module, "../tips/page.html")
    cells = [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"]
    source = module.read_text(encoding="utf-8")
    if any(cell.startswith("%%writefile") for cell in cells):
        # 여러 프로세스를 띄우는 팁은 모듈 전체를 파일로 쓰고 실행합니다.
        assert cells[0] == f"%%writefile {module.name}\n{source}".rstrip("\n")
        return
    _, chunks = split_module(source)
    expected = code_lines("\n".join(code for _, code in chunks)) + ["main()"]
    assert code_lines("\n".join(cells)) == expected
    # 구역 표시 줄과 `if __name__ == "__main__":` 블록은 노트북에 들어가지 않습니다.
    assert "# --8<--" not in "\n".join(cells) and "__main__" not in "\n".join(cells)


def test_tip_pages_link_to_their_notebook_and_its_download(built_site):
    for module in MODULES:
        page = next((built_site / "tips").glob(f"0{module.stem[3]}-*.html"))
        # 왼쪽 메뉴에도 노트북 링크가 있으므로 본문(article)만 봅니다.
        html = re.search(r"<article.*?</article>", page.read_text(encoding="utf-8"), re.S)[0]
        assert f'href="../notebooks/{module.stem}.html"' in html, page.name
        assert re.search(rf'href="../notebooks/{module.stem}.ipynb"\s+download', html), page.name
        notebook_page = built_site / "notebooks" / f"{module.stem}.html"
        assert "노트북 내려받기(.ipynb)" in notebook_page.read_text(encoding="utf-8")
        downloaded = json.loads((built_site / "notebooks" / f"{module.stem}.ipynb").read_text())
        assert downloaded["nbformat"] == 4


def test_every_notebook_runs_on_cpu_when_the_site_is_built_with_execution(tmp_path):
    # 배포용 빌드와 같은 설정입니다. 셀이 하나라도 실패하면 빌드가 멈춥니다(allow_errors: false).
    site = tmp_path / "site"
    result = mkdocs_build(ROOT, site, EXECUTE_NOTEBOOKS="true", NOTEBOOK_CACHE="false")
    assert result.returncode == 0, result.stderr[-3000:]
    for module in MODULES:
        html = (site / "notebooks" / f"{module.stem}.html").read_text(encoding="utf-8")
        # main()은 맨 먼저 어느 장치에서 실행하는지 출력합니다. 그 출력이 페이지에 있어야 합니다.
        assert "장치: cpu" in html, module.stem
        assert "Traceback" not in html, module.stem
