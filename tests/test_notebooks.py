"""측정하는 페이지마다 만드는 노트북의 테스트: 스니펫의 코드를 빠짐없이 담는지, 첫 셀이 필요한
꾸러미를 고정한 버전으로 설치하는지, 내려받은 노트북이 새 환경에서 CPU로 끝까지 실행되는지.

기대값은 노트북을 만드는 함수(hooks/notebooks.py의 split_module 등)를 쓰지 않고 스니펫 파일과
잠금 파일을 직접 읽어 만듭니다. 만드는 함수가 줄을 빠뜨리면 테스트가 알아챕니다."""

import ast
import importlib.metadata
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from mkdocs.config import load_config

from guide import registry
from hooks import cache
from hooks.notebooks import build_notebook
from tests import notebook_run
from tests.site_build import ROOT

PAGES = registry.load()
CLI = ROOT / "snippets" / "_cli.py"
INSTALL = re.compile(r"^%pip install --quiet (?P<packages>.+)$", re.M)


def code_cells(notebook: dict) -> list[str]:
    # 파일의 source는 nbformat이 줄 목록으로 씁니다(nbformat 형식에서는 문자열과 같습니다).
    sources = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return ["".join(source) if isinstance(source, list) else source for source in sources]


def python_of(cell: str) -> str:
    """셀의 Python 코드: `%%writefile` 셀은 쓰는 파일의 내용이고, `%pip` 같은 줄 매직은 뺍니다."""
    lines = cell.splitlines()
    if lines and lines[0].startswith("%%writefile"):
        return "\n".join(lines[1:])
    return "\n".join(line for line in lines if not line.lstrip().startswith("%"))


def module_code_lines(source: str) -> Counter:
    """모듈의 코드 줄(주석, 빈 줄, 모듈 docstring, `__main__` 블록을 뺀 줄)을 셉니다."""
    tree = ast.parse(source)
    skipped = set()
    for node in tree.body:
        is_docstring = node is tree.body[0] and isinstance(
            getattr(node, "value", None), ast.Constant
        )
        is_main = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        if is_docstring or is_main:
            skipped |= set(range(node.lineno, node.end_lineno + 1))
    return Counter(
        line.strip()
        for number, line in enumerate(source.splitlines(), 1)
        if number not in skipped and line.strip() and not line.strip().startswith("#")
    )


def top_level_names(source: str) -> set[str]:
    """맨 위 수준에서 정의하는 이름: 함수, 클래스, 대입의 대상."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_notebook_holds_every_definition_and_code_line_of_the_snippet(page):
    source = page.snippet_path.read_text(encoding="utf-8")
    notebook = build_notebook(page, "../tips/page.html")
    assert notebook["cells"][0]["source"].startswith(f"# {page.heading} 노트북")
    cells = [python_of(cell) for cell in code_cells(notebook)]
    missing = module_code_lines(source) - Counter(
        line.strip() for cell in cells for line in cell.splitlines() if line.strip()
    )
    assert missing == Counter(), f"노트북에 없는 줄: {list(missing)[:5]}"
    defined = set().union(*(top_level_names(cell) for cell in cells))
    assert top_level_names(source) <= defined
    assert "# --8<--" not in "\n".join(cells)  # 페이지용 구역 표시는 노트북에 넣지 않습니다
    if page.run_as_script:
        # 여러 프로세스를 띄우는 모듈은 _cli.py와 모듈 전체를 파일로 쓰고 스크립트로 실행합니다.
        assert code_cells(notebook)[1].startswith("%%writefile _cli.py")
        assert cells[1] == CLI.read_text(encoding="utf-8").rstrip("\n")
        return
    # 나머지는 `__main__` 블록 대신 _cli.py의 pick_device를 그대로 넣고 main()을 부릅니다.
    assert "__main__" not in "\n".join(cells)
    cli = next(
        n for n in ast.parse(CLI.read_text("utf-8")).body if getattr(n, "name", "") == "pick_device"
    )
    last = ast.parse(cells[-1]).body
    assert ast.dump(last[0]) == ast.dump(cli)
    assert ast.unparse(last[-1]) == "main(pick_device())"


def test_the_line_check_can_fail():
    # 노트북이 줄 하나를 빠뜨리거나 정의 하나를 잃으면 위의 비교가 알아챕니다.
    source = "import torch\n\n\ndef main():\n    return torch.ones(1)\n\n\nSIZE = 3\n"
    complete = Counter(line.strip() for line in source.splitlines() if line.strip())
    assert module_code_lines(source) - complete == Counter()
    dropped = source.replace("    return torch.ones(1)\n", "")
    assert module_code_lines(source) - Counter(dropped.split("\n")) != Counter()
    assert top_level_names(source) - top_level_names(source.replace("SIZE = 3", "")) == {"SIZE"}


def locked_versions() -> dict[str, str]:
    """constraints.txt(간접 의존성까지)와 requirements.txt(잠금에서 빠진 torch)의 고정 버전."""
    pins = {}
    for name in ("constraints.txt", "requirements.txt"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            if "==" in line and not line.startswith(("#", "-")):
                package, version = line.split("#")[0].strip().split("==")
                pins.setdefault(re.sub(r"[-_.]+", "-", package).lower(), version)
    return pins


def imported_at_run_time(code: str) -> set[str]:
    """셀을 실행하면 바로 import되는 바깥 꾸러미의 최상위 이름(함수 안의 import는 빼고)."""
    found = set()
    for node in ast.parse(code).body:
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module.split(".")[0])
    if re.search(r"\.numpy\(\)|from_numpy\(", code):  # torch ↔ numpy 변환은 numpy가 있어야 합니다
        found.add("numpy")
    return {name for name in found if name not in sys.stdlib_module_names and name != "_cli"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_first_code_cell_installs_what_the_notebook_imports_at_the_locked_versions(page):
    cells = code_cells(build_notebook(page, "x.html"))
    install = INSTALL.search(cells[0])
    assert install, "첫 코드 셀이 %pip install이 아닙니다"
    installed = dict(spec.split("==") for spec in install["packages"].split())
    imported = set().union(*(imported_at_run_time(python_of(cell)) for cell in cells[1:]))
    distributions = importlib.metadata.packages_distributions()
    needed = {dist.lower() for name in imported for dist in distributions.get(name, [name])}
    assert "torch" in needed
    assert set(installed) == needed  # 노트북이 import하는 것만, 빠짐없이
    pins = locked_versions()
    assert {name: pins[name] for name in installed} == installed


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
        assert INSTALL.search(code_cells(downloaded)[0]), stem


def test_notebook_page_cache_lives_outside_the_repository():
    """mkdocs-jupyter는 캐시에 있는 노트북 HTML을 그대로 페이지에 넣습니다. 그 캐시가 저장소 안
    (git이 나르는 `.cache/mkdocs-jupyter/`)이면 풀 리퀘스트가 페이지에 HTML을 넣습니다(이슈 21)."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    config = config.plugins.on_config(config)  # 훅도 플러그인으로 on_config를 받습니다
    folder = Path(config.plugins["mkdocs-jupyter"].config["cache_dir"]).resolve()
    assert folder == cache.folder("mkdocs-jupyter").resolve()
    assert not folder.is_relative_to(ROOT.resolve())


@pytest.fixture(scope="module")
def fresh_runs(built_site, tmp_path_factory):
    """사이트에서 내려받는 노트북을 모두, 노트북이 import하는 꾸러미가 없는 새 환경에서 nbmake로
    한 번씩 실행한 결과입니다(tests/notebook_run.py). 몇 분 걸려 `notebooks` 묶음에 있습니다."""
    if "MUTANT_UNDER_TEST" in os.environ:
        pytest.skip("변이 시험에서는 노트북을 실행하지 않습니다")
    workdir = tmp_path_factory.mktemp("fresh-notebooks")
    notebooks = [built_site / "notebooks" / f"{page.snippet}.ipynb" for page in PAGES]
    runs = notebook_run.run_notebooks(notebooks, workdir, workers=min(2, os.cpu_count() or 1))
    return runs, workdir / "env" / "bin" / "python"


def outputs_of(notebook: dict) -> list[dict]:
    cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return [output for cell in cells for output in cell["outputs"]]


def text_of(output: dict) -> str:
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


@pytest.mark.notebooks
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_every_downloaded_notebook_runs_on_cpu_in_a_fresh_environment(page, fresh_runs):
    run = fresh_runs[0][page.snippet]
    errors = [o for o in outputs_of(run["notebook"]) if o["output_type"] == "error"]
    assert errors == [], f"{errors[:1]}\n{run['log'][-3000:]}"
    assert f"PASSED {page.snippet}.ipynb" in run["log"], run["log"][-3000:]
    printed = "".join(text_of(o) for o in outputs_of(run["notebook"]))
    # main()은 맨 먼저 어느 장치에서 실행하는지 출력합니다.
    assert "장치: cpu" in printed
    # 저장소에만 있는 명령(벤치마크)을 권하는 줄은 저장소가 필요하다고 함께 말합니다.
    sources = "\n".join("".join(cell["source"]) for cell in run["notebook"]["cells"])
    for line in (printed + "\n" + sources).splitlines():
        if "pytest benchmarks" in line and "print(" not in line:
            assert "저장소" in line, line


@pytest.mark.notebooks
@pytest.mark.timeout(1800)
def test_first_cells_installed_what_the_notebooks_need_into_the_fresh_environment(fresh_runs):
    # 새 환경에는 처음에 torch가 없었습니다(notebook_run.run_notebooks가 확인). 지금 있다면
    # 노트북들의 첫 셀이 적은 꾸러미로 설치한 것입니다.
    assert notebook_run.importable(fresh_runs[1], "torch")


def test_the_notebook_run_reads_what_each_first_cell_installs(tmp_path):
    # 새 환경에는 첫 셀들이 적은 꾸러미만 설치합니다(tests/notebook_run.py). 그 읽기를 확인합니다.
    def notebook(name, first_cell):
        path = tmp_path / f"{name}.ipynb"
        cells = [{"cell_type": "code", "source": first_cell, "outputs": []}]
        path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
        return path

    with_numpy = notebook("b", "%pip install --quiet numpy==2.4.6 torch==2.13.0")
    as_lines = notebook("c", ["%pip install --quiet torch==2.13.0\n", "import torch\n"])
    nothing = notebook("d", "print(1)")
    assert notebook_run.installs(with_numpy) == {"numpy==2.4.6", "torch==2.13.0"}
    assert notebook_run.installs(as_lines) == {"torch==2.13.0"}
    assert notebook_run.installs(nothing) == set()


def test_the_deploy_build_executes_every_notebook_and_stops_on_an_error(monkeypatch):
    """배포(.github/workflows/docs.yml)는 EXECUTE_NOTEBOOKS=true로 빌드합니다. 그때 mkdocs-jupyter가
    노트북을 실행하고, 셀 하나라도 실패하면 빌드가 멈춥니다. 실행 자체는 위 테스트가 새 환경에서
    확인합니다."""
    workflow = (ROOT / ".github" / "workflows" / "docs.yml").read_text(encoding="utf-8")
    assert re.search(r'EXECUTE_NOTEBOOKS: "true"', workflow)

    def jupyter_config(execute: str) -> dict:
        monkeypatch.setenv("EXECUTE_NOTEBOOKS", execute)
        return load_config(str(ROOT / "mkdocs.yml")).plugins["mkdocs-jupyter"].config

    assert jupyter_config("true")["execute"] is True
    assert jupyter_config("true")["allow_errors"] is False
    assert jupyter_config("false")["execute"] is False
