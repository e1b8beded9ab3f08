"""사이트 전체 테스트: 빌드, 끼워 넣기, 손으로 쓴 코드 금지, 복사한 코드의 실행, 외부 요청 없음."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from guide import registry
from hooks import cache, chart_svg, dirty, snippet_check
from hooks import pages as pages_hook
from hooks.snippet_check import INCLUDE, find_problem
from tests.site_build import ROOT, mkdocs_build, section_lines
from tests.site_scan import CONFIG

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\w*)(?P<attrs>[^\n]*)\n(?P<body>.*?)^(?P=indent)```",
    re.M | re.S,
)
# 히라가나, 가타카나, 반각 가타카나, 한자(CJK 통합 한자): 한국어 본문에는 어느 것도 쓰지 않습니다.
JAPANESE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u4e00-\u9fff]")
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)


def page_id(path: Path) -> str:
    return str(path.relative_to(DOCS))


def test_normal_build_redraws_no_chart_and_runs_no_notebook(built_site, tmp_path):
    """편집자가 `mkdocs serve`로 고칠 때마다 겪는 빌드가 빠른 까닭을 셉니다(시간은 2코어 CI에서
    흔들려서 재지 않습니다): 차트는 사용자 캐시 폴더(hooks/cache.py)에서 읽어 다시 그리지 않고,
    노트북은 실행하지 않습니다. built_site가 같은 입력으로 캐시를 이미 채웠습니다."""
    charts = chart_svg.CACHE
    before = {path.name: path.stat().st_mtime_ns for path in charts.glob("*.svg")}
    result = mkdocs_build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    after = {path.name: path.stat().st_mtime_ns for path in charts.glob("*.svg")}
    assert after == before  # 새로 그리거나 다시 쓴 차트가 없습니다
    if any((ROOT / "results").glob("*.json")):
        assert before  # 결과가 있으면 차트가 있고, 그 차트를 캐시에서 읽었습니다
    notebook = (tmp_path / "site" / "notebooks" / "tip4_create_on_device.html").read_text("utf-8")
    assert "실행하지 않고 빌드해서 출력이 없습니다" in notebook


def test_the_build_hooks_load_no_pytorch():
    # 빌드는 결과 파일을 읽고 코드 지문만 비교하므로 torch가 필요 없습니다. torch를 읽으면
    # `mkdocs build`와 `mkdocs serve`의 시작이 1.5초쯤 늦어집니다(results_format/provenance.py).
    hooks = [Path(path).stem for path in CONFIG["hooks"]]
    probe = (
        "import importlib, sys\n"
        f"for name in {hooks!r}: importlib.import_module('hooks.' + name)\n"
        "print(sorted(m for m in ('torch', 'lightning') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_serve_rebuild_compiles_no_template_twice():
    """`mkdocs serve`는 다시 빌드할 때마다 Jinja 환경을 새로 만듭니다. 훅이 건네는 바이트코드 캐시
    (hooks/cache.py의 TEMPLATES) 덕분에 두 번째 환경은 같은 템플릿을 다시 컴파일하지 않고, 템플릿을
    고치면 그 템플릿만 다시 컴파일합니다."""
    templates = {"page.html": "{{ title }}"}
    shared = cache.TemplateCode()

    def render_in_new_environment() -> tuple[str, int]:
        env = jinja2.Environment(loader=jinja2.DictLoader(templates))
        original = env.compile
        compiled = []
        env.compile = lambda *args, **kwargs: compiled.append(args) or original(*args, **kwargs)
        env = pages_hook.on_env(env, config=None, files=None)
        env.bytecode_cache = shared if env.bytecode_cache is cache.TEMPLATES else None
        return env.get_template("page.html").render(title="가"), len(compiled)

    assert render_in_new_environment() == ("가", 1)
    assert render_in_new_environment() == ("가", 0)
    templates["page.html"] = "<{{ title }}>"
    assert render_in_new_environment() == ("<가>", 1)


def test_dirty_serve_rebuilds_the_pages_whose_snippet_or_shared_input_changed(tmp_path):
    """`mkdocs serve --dirty`는 Markdown이 바뀐 페이지만 다시 만듭니다. hooks/dirty.py는 끼워 넣은
    스니펫이나 모든 페이지가 읽는 입력(결과 파일 등)이 빌드된 HTML보다 새로운 페이지도 바뀐 것으로
    칩니다."""
    (tmp_path / "mkdocs.yml").write_text("")
    for name, text in {"a.md": '--8<-- "snippets/x.py:fast"\n', "b.md": "글\n"}.items():
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
        (tmp_path / "site").mkdir(exist_ok=True)
        (tmp_path / "site" / name.replace(".md", ".html")).write_text("<p>")
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "x.py").write_text("x = 1\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "cpu.json").write_text("{}")
    config = SimpleNamespace(config_file_path=str(tmp_path / "mkdocs.yml"))

    def modified_after(edited: str) -> dict[str, bool]:
        for path in tmp_path.rglob("*"):
            os.utime(path, (1000, 1000))  # 모두 같은 때에 고치고
        for path in (tmp_path / "site").iterdir():
            os.utime(path, (2000, 2000))  # 그 뒤에 빌드했습니다
        if edited:
            os.utime(tmp_path / edited, (3000, 3000))  # 그 뒤에 하나를 고쳤습니다
        docs, site = str(tmp_path / "docs"), str(tmp_path / "site")
        # 페이지 둘: a는 스니펫을 끼워 넣고, b는 끼워 넣지 않습니다.
        files = Files([File(name, docs, site, False) for name in ["a.md", "b.md"]])
        dirty.on_files(files, config)
        return {file.src_uri: file.is_modified() for file in files}

    assert modified_after("") == {"a.md": False, "b.md": False}
    assert modified_after("snippets/x.py") == {"a.md": True, "b.md": False}
    assert modified_after("docs/b.md") == {"a.md": False, "b.md": True}
    assert modified_after("results/cpu.json") == {"a.md": True, "b.md": True}


def test_serve_polls_the_watched_snippet_folders_every_tenth_of_a_second(tmp_path):
    """mkdocs는 0.5초마다 폴더를 훑어 변경을 찾습니다. on_serve 뒤에 등록되는 mkdocs.yml의 watch
    폴더(스니펫)는 hooks/dirty.py 덕분에 0.1초마다 훑습니다(watchdog이 바뀌면 여기서 드러납니다)."""
    from mkdocs.livereload import LiveReloadServer

    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets").mkdir()
    server.watch(str(tmp_path / "docs"))  # mkdocs가 on_serve 전에 등록하는 폴더
    assert dirty.on_serve(server, None, None) is server
    server.watch(str(tmp_path / "snippets"))
    polls = {Path(e.watch.path).name: e.timeout for e in server.observer.emitters}
    assert polls == {"docs": 0.5, "snippets": dirty.POLL_S} and dirty.POLL_S <= 0.1


def test_measured_page_titles_have_ids_that_start_with_a_letter(built_site):
    # 숫자로 시작하는 id(예전의 "16bit")는 CSS 선택자에 못 쓰고 html-validate가 거절합니다.
    for page in registry.load():
        html = (built_site / page.doc.replace(".md", ".html")).read_text(encoding="utf-8")
        assert re.search(rf'<h1 id="{page.id}"', html), page.id
        assert re.fullmatch(r"[a-z][a-z0-9-]*", page.id), page.id


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_snippet_reference_exists(page):
    problems = [find_problem(ROOT, t) for t in INCLUDE.findall(page.read_text(encoding="utf-8"))]
    assert [p for p in problems if p] == []


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        ("snippets/tip4_create_on_device.py:no_such_section", '구역 "no_such_section"'),
        ("snippets/no_such_file.py:fast", "스니펫 파일이 없습니다(snippets/no_such_file.py)"),
        ("snippets/tip4_create_on_device.py:10:20", "줄 번호 대신"),
    ],
)
def test_broken_snippet_reference_fails_the_build_naming_page_and_section(include, expected):
    # 빌드가 부르는 훅(mkdocs.yml의 hooks)을 같은 프로세스에서 페이지 하나에 부릅니다.
    assert "  - hooks/snippet_check.py\n" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    source = (ROOT / "docs" / "tips" / "04-create-on-device.md").read_text(encoding="utf-8")
    markdown = source + f'\n```python\n--8<-- "{include}"\n```\n'
    page = SimpleNamespace(file=SimpleNamespace(src_uri="tips/04-create-on-device.md"))
    config = SimpleNamespace(config_file_path=str(ROOT / "mkdocs.yml"))
    assert snippet_check.on_page_markdown(source, page, config, None) == source
    with pytest.raises(PluginError) as caught:
        snippet_check.on_page_markdown(markdown, page, config, None)
    assert "tips/04-create-on-device.md" in str(caught.value)
    assert expected in str(caught.value)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_hand_written_python_in_pages(page):
    for fence in FENCE.finditer(page.read_text(encoding="utf-8")):
        if fence["lang"] in ("python", "py", "pycon"):
            lines = [line.strip() for line in fence["body"].splitlines() if line.strip()]
            handwritten = [line for line in lines if not INCLUDE.match(line)]
            assert handwritten == [], f"{page_id(page)}: 손으로 쓴 Python 코드가 있습니다"


def text_files():
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in tracked:
        path = ROOT / name
        if path.suffix in (".md", ".py", ".yml", ".yaml", ".txt", ".toml", ".css", ".html", ""):
            if path.is_file():
                yield path


def test_no_japanese_text_anywhere():
    found = []
    for path in text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if JAPANESE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert found == []


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_headings_carry_fixed_english_anchors(page):
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for _, heading in HEADING.findall(text):
        assert re.search(r"\{ #[a-z0-9-]+ \}$", heading), f"{page_id(page)}: {heading}"


# 독자가 따로 복사해 가도 되는 블록의 제목: ```python title="따로 복사해도 실행됩니다"
ALONE = "따로 복사해도 실행됩니다"


@dataclass(frozen=True)
class Block:
    """페이지의 Python 코드 블록 하나를 독자가 복사했을 때의 모습입니다."""

    name: str  # "tips/04-create-on-device.md 블록 2"
    code: str
    alone: bool  # 제목이 ALONE이면 이 블록만 빈 파일에 붙여 넣어도 실행되어야 합니다


def python_blocks(markdown: str, name: str, root: Path = ROOT) -> list[Block]:
    """페이지의 Python 블록을 페이지 순서대로(탭도 보이는 순서대로) 돌려줍니다."""
    blocks = []
    fences = [fence for fence in FENCE.finditer(markdown) if fence["lang"] == "python"]
    for number, fence in enumerate(fences, 1):
        parts = []
        for target in INCLUDE.findall(fence["body"]):
            path, _, section = target.partition(":")
            source = (root / path).read_text(encoding="utf-8")
            parts.append(section_lines(source, section) if section else source)
        alone = f'title="{ALONE}"' in fence["attrs"]
        blocks.append(Block(f"{name} 블록 {number}", "\n".join(parts), alone))
    return blocks


def page_blocks() -> dict[str, list[Block]]:
    pages = {page_id(page): python_blocks(page.read_text("utf-8"), page_id(page)) for page in PAGES}
    return {name: blocks for name, blocks in pages.items() if blocks}


# 페이지마다 블록을 노트북의 셀처럼 위에서 아래로 한 이름 공간에서 실행하고, 따로 복사해도 된다고
# 적은 블록은 새 이름 공간에서 한 번 더 실행합니다. 실패한 블록 뒤의 블록은 그 블록에 기대므로
# 실행하지 않습니다. 모든 페이지를 한 프로세스에서 실행해 torch를 한 번만 import합니다.
RUN_PAGES = """
import importlib.abc, json, sys, traceback

class NoRepository(importlib.abc.MetaPathFinder):
    # 저장소는 편집 가능 설치(-e .)라서 어느 폴더에서나 import됩니다. 독자의 컴퓨터에는 없습니다.
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"snippets", "guide", "benchmarks", "hooks", "tests"}:
            raise ModuleNotFoundError(f"저장소의 {name}은 독자에게 없습니다", name=name)

sys.meta_path.insert(0, NoRepository())
failures = {}

def run(cells):
    namespace = {"__name__": "copied_block"}
    for name, code in cells:
        try:
            exec(compile(code, name, "exec"), namespace)
        except BaseException:
            failures[name] = traceback.format_exc(limit=-3)
            return

for page in json.load(sys.stdin):
    run(page["cells"])
    for name, code in page["alone"]:
        run([(name + " (따로 복사)", code)])
print(json.dumps(failures, ensure_ascii=False))
"""


def run_pages(pages: dict[str, list[Block]], cwd: Path) -> dict[str, str]:
    """{실패한 블록 이름: traceback}. 저장소 밖의 빈 폴더에서, 저장소 패키지 없이 실행합니다."""
    payload = [
        {
            "cells": [(block.name, block.code) for block in blocks],
            "alone": [(block.name, block.code) for block in blocks if block.alone],
        }
        for blocks in pages.values()
    ]
    result = subprocess.run(
        [sys.executable, "-c", RUN_PAGES],
        input=json.dumps(payload),
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def repeated_imports(blocks: list[Block]) -> list[str]:
    """페이지의 블록 전체에서 두 번 이상 나오는 맨 위 수준의 import(이름 하나 단위)."""
    seen: dict[str, int] = {}
    for block in blocks:
        for node in ast.parse(block.code).body:
            if isinstance(node, ast.Import):
                names = [f"import {ast.unparse(alias)}" for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                names = [f"from {module} import {ast.unparse(alias)}" for alias in node.names]
            else:
                continue
            for imported in names:
                seen[imported] = seen.get(imported, 0) + 1
    return [imported for imported, count in seen.items() if count > 1]


def test_every_page_runs_top_to_bottom_like_a_notebook(tmp_path):
    pages = page_blocks()
    assert len(pages) >= 14
    assert run_pages(pages, tmp_path) == {}


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_each_import_appears_once_on_a_page(page):
    # import는 그것이 처음 필요한 블록에 한 번만 둡니다. 뒤의 블록은 가르치는 코드만 보여 줍니다.
    blocks = python_blocks(page.read_text(encoding="utf-8"), page_id(page))
    assert repeated_imports(blocks) == []


PLANTED = """\
# --8<-- [start:imports]
import math
# --8<-- [end:imports]
# --8<-- [start:radius]
RADIUS = 2.0
# --8<-- [end:radius]
# --8<-- [start:area]
AREA = math.pi * RADIUS**2
# --8<-- [end:area]
# --8<-- [start:typo]
AREA = math.pi * RADUIS**2
# --8<-- [end:typo]
# --8<-- [start:repository]
from snippets import tip4_create_on_device
# --8<-- [end:repository]
"""


def planted_page(*blocks: tuple[str, ...], title: str = "") -> str:
    """구역 이름들의 블록으로 페이지를 만듭니다. 마지막 블록에 title을 붙일 수 있습니다."""
    fences = []
    for number, sections in enumerate(blocks, 1):
        header = f' title="{title}"' if title and number == len(blocks) else ""
        includes = "".join(f'--8<-- "snippets/planted.py:{section}"\n' for section in sections)
        fences.append(f"```python{header}\n{includes}```\n")
    return "\n본문입니다.\n\n".join(fences)


def test_page_checks_can_fail(tmp_path):
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "planted.py").write_text(PLANTED, encoding="utf-8")
    pages = {
        name: python_blocks(markdown, name, root=tmp_path)
        for name, markdown in {
            "good": planted_page(("imports", "radius"), ("area",)),
            # 둘째 블록이 어디에도 정의되지 않은 이름을 씁니다.
            "typo": planted_page(("imports", "radius"), ("typo",), ("area",)),
            # 앞 블록의 이름에 기대는 블록을 "따로 복사해도 실행됩니다"라고 적었습니다.
            "alone": planted_page(("imports", "radius"), ("area",), title=ALONE),
            # 독자에게는 없는 저장소 패키지를 import합니다.
            "repository": planted_page(("repository",)),
        }.items()
    }
    assert [block.alone for block in pages["alone"]] == [False, True]
    failures = run_pages(pages, tmp_path)
    assert sorted(failures) == ["alone 블록 2 (따로 복사)", "repository 블록 1", "typo 블록 2"]
    assert "NameError: name 'RADUIS'" in failures["typo 블록 2"]
    assert "NameError: name 'math'" in failures["alone 블록 2 (따로 복사)"]
    assert "ModuleNotFoundError" in failures["repository 블록 1"]
    # 같은 import가 두 블록에 있으면 잡고, 한 번이면 통과합니다.
    repeated = python_blocks(
        planted_page(("imports", "radius"), ("imports", "area")), "x", tmp_path
    )
    assert repeated_imports(repeated) == ["import math"]
    assert repeated_imports(pages["good"]) == []


EXTERNAL_RESOURCE = re.compile(
    r"<(?:script|img|iframe|source|audio|video)[^>]*\ssrc=\"(https?:)?//|"
    r"<link[^>]*\shref=\"(https?:)?//[^\"]*\"[^>]*rel=\"(?:stylesheet|preconnect|preload|icon)|"
    r"<link[^>]*rel=\"(?:stylesheet|preconnect|preload|icon)\"[^>]*\shref=\"(https?:)?//|"
    r"url\((['\"]?)(https?:)?//"
)


HANGUL = re.compile(r"[\uac00-\ud7a3]")


def images_without_korean_alt(html: str) -> list[str]:
    """alt가 없거나 alt에 한글이 없는 <img> 태그들을 돌려줍니다."""
    missing = []
    for tag in re.findall(r"<img\b[^>]*>", html):
        alt = re.search(r'\salt="([^"]*)"', tag)
        if not alt or not HANGUL.search(alt[1]):
            missing.append(tag)
    return missing


def test_the_site_checks_can_catch_what_they_look_for():
    # 지금 사이트에는 <img>도 외부 자원도 없어서, 아래 두 검사가 실제로 잡아내는지 여기서 봅니다.
    assert images_without_korean_alt('<img src="a.svg"><img src="b.svg" alt="chart">') != []
    assert images_without_korean_alt('<img src="c.svg" alt="속도 향상 차트">') == []
    assert EXTERNAL_RESOURCE.search('<script src="https://cdn.example/x.js"></script>')
    assert EXTERNAL_RESOURCE.search('<link rel="stylesheet" href="//fonts.example/css">')
    assert not EXTERNAL_RESOURCE.search('<a href="https://example.com/">link</a>')


def site_files(site_dir, suffixes):
    return [p for p in site_dir.rglob("*") if p.suffix in suffixes]


def test_built_site_requests_nothing_from_other_hosts(built_site):
    offenders = [
        str(path.relative_to(built_site))
        for path in site_files(built_site, (".html", ".css"))
        if EXTERNAL_RESOURCE.search(path.read_text("utf-8"))
    ]
    assert offenders == []


def test_images_have_korean_alt_text(built_site):
    missing = {
        str(path.relative_to(built_site)): bad
        for path in site_files(built_site, (".html",))
        if (bad := images_without_korean_alt(path.read_text("utf-8")))
    }
    assert missing == {}


def test_site_defaults_to_dark_with_a_toggle_and_korean(built_site):
    site_dir = built_site
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ko"' in html
    assert 'data-md-color-scheme="slate"' in html
    assert "밝은 화면으로 바꾸기" in html
