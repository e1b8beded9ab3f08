"""guide/pages.toml(레지스트리)의 테스트: 측정하는 페이지는 레지스트리 한 곳에만 적고, 나머지
(메뉴, 제목, 노트북, 결과, 홈 표)는 모두 거기서 나오는지 확인합니다.

P7: "레지스트리 밖에 페이지 목록이 없다"는 검사는 코드뿐 아니라 Markdown과 mkdocs.yml도 읽고, 손으로
적은 페이지 목록(슬러그 목록, 메뉴 항목, 링크만 늘어놓은 목차)을 찾습니다. 심은 파일로 실패를
보입니다.
"""

from __future__ import annotations

import ast
import copy
import importlib
import os
import re
import shutil
import subprocess
import tomllib
from html import unescape
from pathlib import Path

import pytest

from guide import registry
from results_format import schema
from tests.results_sample import (
    GPU_DEVICE,
    document,
    entry,
    ratio,
    section,
    write_named,
)
from tests.site_build import ROOT, copy_project, mkdocs_build

PAGES = registry.load()
REGISTRY_ONLY = "bench_registry"  # 벤치마크 모듈 없이 레지스트리의 inputs로 재는 페이지


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_every_page_has_its_snippet_benchmark_test_and_doc(page):
    assert page.snippet_path.is_file() and page.benchmark_path.is_file()
    assert (ROOT / "tests" / f"test_{page.snippet}.py").is_file()
    if page.benchmark != REGISTRY_ONLY:
        bench = ast.parse(page.benchmark_path.read_text(encoding="utf-8"))
        assigned = {
            node.targets[0].id: node.value.value
            for node in bench.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        }
        assert assigned.get("PAGE") == page.id
    doc = (ROOT / "docs" / page.doc).read_text(encoding="utf-8")
    assert doc.startswith(f"---\npage: {page.id}\n---\n")
    assert not re.search(r"^# ", doc, re.M), "H1은 레지스트리의 제목으로 빌드가 넣습니다"
    assert re.search(r"^<!-- results -->$", doc, re.M)
    for name in ("slow", "fast"):
        assert f'--8<-- "snippets/{page.snippet}.py:{name}"' in doc


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_registry_entries_are_complete(page):
    assert page.groups and page.variants and page.overview
    for group in page.groups.values():
        assert group.title and group.work and group.conclusion in registry.CONCLUSIONS
    # 요약과 "비교하는 것"은 측정값을 적지 않습니다(P2): 숫자 뒤에 배나 단위가 없습니다.
    for text in (page.summary, page.compares, *page.variants.values()):
        assert not re.search(r"\d+(\.\d+)?\s*(배|%|ms|GB/s|TFLOP)", text), text
    for spec in page.breakeven:
        assert spec.cost_metric == "median_s" or spec.cost_metric in schema.METRICS
    assert set(page.cuda_only) <= set(page.variants)


def declared_groups(module) -> set[str]:
    """벤치마크 모듈의 테스트가 @pytest.mark.measures(...)로 채운다고 밝힌 묶음(매개변수 포함)."""
    found = set()
    for name, fn in vars(module).items():
        if not (name.startswith("test") and callable(fn)):
            continue
        for mark in getattr(fn, "pytestmark", []):
            if mark.name == "measures":
                found |= set(mark.args)
            elif mark.name == "parametrize":
                for value in mark.args[1]:
                    for inner in getattr(value, "marks", ()):
                        found |= set(inner.args) if inner.name == "measures" else set()
    return found


@pytest.mark.parametrize("page", [p for p in PAGES if p.benchmark != REGISTRY_ONLY],
                         ids=lambda p: p.id)  # fmt: skip
def test_every_registry_group_is_measured_or_explained_by_its_benchmark(page):
    """묶음마다 그것을 채우는 벤치마크가 있어야 발행할 수 있습니다(재거나, 재지 않은 이유를 남김).
    없으면 `--publish`가 그 페이지를 늘 거절합니다(benchmarks/session.page_problem)."""
    module = importlib.import_module(f"benchmarks.{page.benchmark}")
    assert declared_groups(module) == set(page.groups)


def test_ids_slugs_and_numbers_are_unique_within_sections():
    assert len({p.id for p in PAGES}) == len(PAGES)
    assert len({p.doc for p in PAGES}) == len(PAGES)
    for name in registry.SECTIONS:
        numbers = [p.number for p in registry.pages(name)]
        assert numbers == list(range(1, len(numbers) + 1)), name


# --- P7: 페이지 목록은 레지스트리에만 --------------------------------------------------------

# 팁의 목록이나 개수를 레지스트리 밖에 적은 예전 흔적들입니다.
HARD_CODED = [
    re.compile(r"range\(1,\s*8\)"),
    re.compile(r"tip\[1-7\]"),
    re.compile(r"stem\[3\]"),
    re.compile(r"""["']tip1["'].{0,80}["']tip2["'].{0,80}["']tip3["']""", re.S),
    re.compile(r"notebooks/tip\d_\w+\.ipynb"),
]
QUOTED = re.compile(r"""["']([^"'\n]{1,80})["']""")
DOC_PATH = re.compile(r"\b(?:tips|beyond|capstone)/\d\d-[a-z0-9-]+\.md\b")
# 링크 하나만 있는 목록 항목: "- [SDPA](beyond/05-sdpa.md)", "3. **[SDPA](05-sdpa.md)**"
LINK_ITEM = re.compile(
    r"^\s*(?:[-*+]|\d+\.)\s+(?:\*\*)?\[[^\]]+\]\(([^)\s#]+)(?:#[^)]*)?\)(?:\*\*)?\s*$"
)
CODE = (".py", ".html", ".js", ".toml", ".yml", ".yaml")


def page_names() -> set[str]:
    names = set()
    for page in PAGES:
        names |= {page.id, page.slug, page.doc, page.doc.removesuffix(".md")}
    return names


def quoted_lists(text: str) -> list[str]:
    """200자 안에 따옴표로 둘러싼 페이지 이름(id, 슬러그, 경로)이 셋 이상 나오는 곳."""
    names = page_names()
    hits = [(m.start(), m[1]) for m in QUOTED.finditer(text) if m[1] in names]
    found = []
    for start, _ in hits:
        window = {name for at, name in hits if 0 <= at - start <= 200}
        if len(window) >= 3:
            found.append(", ".join(sorted(window)))
    return found[:1]


def link_lists(name: str, text: str) -> list[str]:
    """링크 하나만 있는 목록 항목이 셋 이상 이어지며 모두 다른 측정 페이지를 가리키는 곳(목차)."""
    docs = {page.doc for page in PAGES}
    folder = Path(name).parent.relative_to("docs") if name.startswith("docs/") else Path()
    found, run = [], []
    for line in [*text.splitlines(), ""]:
        match = LINK_ITEM.match(line)
        target = os.path.normpath(folder / match[1]) if match else None
        if target in docs:
            run.append(target)
            continue
        if len(set(run)) >= 3:
            found.append(", ".join(run))
        run = []
    return found


def page_lists(root: Path, names: list[str]) -> list[str]:
    """레지스트리 밖에서 페이지를 나열하거나 세는 곳들(파일: 무엇)."""
    found = []
    for name in names:
        if name in ("guide/pages.toml", "tests/test_registry.py") or not (root / name).is_file():
            continue
        text = (root / name).read_text(encoding="utf-8", errors="replace")
        if name.endswith(CODE):
            found += [f"{name}: {p.pattern}" for p in HARD_CODED if p.search(text)]
        if name.endswith(CODE) and not name.startswith(("tests/", "snippets/")):
            found += [f"{name}: 이름 목록 {hit}" for hit in quoted_lists(text)]
        if name == "mkdocs.yml":
            found += [f"{name}: 메뉴 항목 {hit}" for hit in DOC_PATH.findall(text)]
        if name.endswith(".md"):
            found += [f"{name}: 목차 {hit}" for hit in link_lists(name, text)]
    return found


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    return [name for name in listed if name.endswith((*CODE, ".md"))]


def test_no_list_or_count_of_pages_is_written_outside_the_registry():
    names = tracked_files()
    assert "mkdocs.yml" in names and any(n.endswith(".md") for n in names)  # 무엇을 읽었는지
    assert page_lists(ROOT, names) == []


PLANTED = {
    # P7의 변형 두 가지와 Markdown 목차
    "hooks/render.py": 'FEATURED = ["sdpa", "channels-last", "cudnn-benchmark"]\n',
    "mkdocs.yml": "nav:\n  - 홈: index.md\n  - registry/pages\n  - SDPA: beyond/05-sdpa.md\n",
    "docs/index.md": (
        "## 더 나아가기\n\n- [torch.compile](beyond/01-torch-compile.md)\n"
        "- [CUDA 그래프](beyond/02-cuda-graphs.md)\n"
        "- [융합 옵티마이저](beyond/03-fused-optimizers.md)\n"
    ),
    "docs/beyond/index.md": (
        "1. [SDPA](05-sdpa.md)\n2. [channels_last](06-channels-last.md#x)\n"
        "3. **[cudnn.benchmark](07-cudnn-benchmark.md)**\n"
    ),
    "benchmarks/order.py": "for n in range(1, 8):\n    tip = f'tip{n}'\n",
}
# 읽는 사람에게 순서와 이유를 말하는 목록(설명이 있는 항목)은 목차가 아닙니다.
ALLOWED = {
    "docs/beyond/index.md": (
        "1. **[SDPA](05-sdpa.md)**: 손으로 쓴 어텐션을 한 줄로 바꿉니다.\n"
        "2. **[융합(fused) 옵티마이저](03-fused-optimizers.md)**: `fused=True` 한 단어입니다.\n"
        "3. **[torch.compile](01-torch-compile.md)**: 모양을 정한 뒤에 겁니다.\n"
    ),
    "hooks/templating.py": 'REQUIRES_LABELS = {"any": "CPU 또는 GPU", "cuda": "CUDA GPU"}\n',
    "snippets/capstone_gpt.py": 'STAGES = ["tf32", "sdpa", "compile"]\n',
}


def plant(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return list(files)


def test_the_page_list_check_catches_planted_lists_in_code_yaml_and_markdown(tmp_path):
    found = page_lists(tmp_path, plant(tmp_path, PLANTED))
    assert sorted({line.split(":")[0] for line in found}) == sorted(PLANTED)


def test_the_page_list_check_lets_explained_lists_and_other_names_pass(tmp_path):
    assert page_lists(tmp_path, plant(tmp_path, ALLOWED)) == []


def article(html):
    return re.search(r"<article.*?</article>", html, flags=re.DOTALL).group(0)


def test_one_title_per_page_everywhere(built_site):
    home = unescape((built_site / "index.html").read_text(encoding="utf-8"))
    for page in PAGES:
        html = unescape((built_site / page.doc.replace(".md", ".html")).read_text("utf-8"))
        [h1] = re.findall(r"<h1[^>]*>(.*?)<", article(html))
        assert h1.strip() == page.heading
        nav_link = rf'href="[^"]*{page.doc.rpartition("/")[2].replace(".md", ".html")}"[^>]*>'
        label = rf"\s*(<span[^>]*>)?\s*{re.escape(page.heading)}\s*<"
        assert re.search(nav_link + label, html), "메뉴의 이름이 레지스트리의 제목과 다릅니다"
        notebook = unescape((built_site / "notebooks" / f"{page.snippet}.html").read_text("utf-8"))
        assert f"{page.heading} 노트북" in notebook
        assert page.heading in home
        # 페이지 끝에 레지스트리가 붙이는 노트북 링크
        assert f'href="../notebooks/{page.snippet}.ipynb" download' in html


DEMO_ENTRY = """
[[page]]
id = "demo"
section = "beyond"
number = {number}
slug = "demo"
title = "시험용 페이지"
summary = "레지스트리에 한 항목을 더하면 연결이 모두 생기는지 봅니다."
compares = "시험용 느린 방식 대 빠른 방식"
snippet = "demo_page"
benchmark = "bench_demo_page"
requires = "any"
overview = [{{ group = "pair", label = "시험용 비교" }}]

[page.groups.pair]
title = "시험용 묶음 (크기 {{n}})"
work = "호출 1번"

[page.variants]
slow = "시험용 느린 방식"
fast = "시험용 빠른 방식"
"""
DEMO_MODULES = ("demo_page", "bench_demo_page")
DEMO_PAGE = """---
page: demo
---

## 코드 { #code }

```python
--8<-- "snippets/demo_page.py:slow"
--8<-- "snippets/demo_page.py:fast"
```

## 측정 결과 { #results }

<!-- results -->
"""


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """레지스트리에 한 항목(과 그 스니펫, 벤치마크, 문서, 결과)만 더한 복사본을 빌드합니다."""
    tmp_path = tmp_path_factory.mktemp("registry-demo")
    project = copy_project(tmp_path / "project")
    number = len(registry.pages("beyond")) + 1
    with open(project / "guide" / "pages.toml", "a", encoding="utf-8") as toml:
        toml.write(DEMO_ENTRY.format(number=number))
    # 스니펫은 팁 4의 것을 빌려 씁니다(구역 이름이 같습니다).
    shutil.copy(
        ROOT / "snippets" / "tip4_create_on_device.py", project / "snippets" / "demo_page.py"
    )
    (project / "benchmarks" / "bench_demo_page.py").write_text('PAGE = "demo"\n', encoding="utf-8")
    (project / "docs" / "beyond" / f"{number:02d}-demo.md").write_text(DEMO_PAGE, encoding="utf-8")
    rows = [
        entry("slow", "pair", "slow", "baseline", 0.00377, params={"n": 4}),
        entry("fast", "pair", "fast", "recommended", 0.00131, params={"n": 4},
              ratio=ratio(2.88, 2.81, 2.95)),
    ]  # fmt: skip
    demo = section("demo", project, rows, modules=DEMO_MODULES)
    shutil.rmtree(project / "results", ignore_errors=True)
    # 진단 페이지의 예시 보고서는 측정 결과가 아니라 진단기가 쓴 JSON입니다: 그대로 둡니다.
    shutil.copytree(ROOT / "results" / "doctor", project / "results" / "doctor")
    write_named(project / "results", document(GPU_DEVICE, {"demo": demo}))
    site = tmp_path / "site"
    # 멈춘 빌드는 pytest-timeout의 상한(pyproject.toml)에서 실패하고, subprocess.run이 빌드를
    # 끝냅니다.
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr[-3000:]
    return site, number


def test_an_extra_registry_entry_gets_nav_title_notebook_and_results(demo_site):
    site, number = demo_site
    page = unescape((site / "beyond" / f"{number:02d}-demo.html").read_text(encoding="utf-8"))
    assert "시험용 페이지" in re.search(r"<h1[^>]*>(.*?)<", page)[1]
    assert "시험용 묶음 (크기 4)" in page and "2.88배 (2.81–2.95, 빨라짐)" in page
    assert (site / "notebooks" / "demo_page.html").is_file()
    home = unescape((site / "index.html").read_text(encoding="utf-8"))
    assert "시험용 비교" in home and f"beyond/{number:02d}-demo.html" in home


def test_registry_pages_missing_from_the_results_file_read_not_yet_measured(demo_site):
    site, _ = demo_site
    text = unescape((site / "tips" / "06-16bit.html").read_text(encoding="utf-8"))
    assert "아직 재지 않음" in text
    assert "benchmarks/bench_tip6_16bit.py --benchmark --publish" in text


def test_every_page_links_to_its_source_in_the_one_repository(built_site):
    from mkdocs.config import load_config

    # 빌드(built_site)와 같은 환경에서 읽으므로 REPOSITORY_URL이 없을 때의 값입니다.
    repo = load_config(str(ROOT / "mkdocs.yml"))["extra"]["repository"]
    owner_name = repo.removeprefix("https://github.com/")
    guard = (ROOT / ".github" / "workflows" / "gpu-benchmark.yml").read_text(encoding="utf-8")
    assert f"github.repository == '{owner_name}'" in guard
    html = (built_site / "tips" / "04-create-on-device.html").read_text(encoding="utf-8")
    assert f'href="{repo}/blob/main/docs/tips/04-create-on-device.md"' in html
    assert f'href="{repo}/blob/main/snippets/tip4_create_on_device.py"' in html


# --- pages.toml 한 항목을 읽는 규칙(guide/registry.py의 _parse_page) ---------------------------


def raw_page(page_id="tip4", **changes) -> dict:
    """pages.toml의 한 항목을 고쳐 볼 수 있는 사본(읽는 함수가 항목을 바꾸므로 매번 새로)."""
    with open(registry.REGISTRY, "rb") as handle:
        found = next(p for p in tomllib.load(handle)["page"] if p["id"] == page_id)
    return {**copy.deepcopy(found), **changes}


def test_a_group_keeps_every_optional_field_it_sets_and_defaults_the_rest():
    full = {
        "title": "t", "work": "w", "conclusion": "tradeoff", "ceiling_label": "MFU",
        "note": "n", "report_title": "r", "saving_param": "epochs", "saving_unit": "에폭",
        "inputs": "make", "sizes": {"cpu": {"n": 1}}, "baseline": "b", "recommended": "c",
    }  # fmt: skip
    groups = {**raw_page()["groups"], "full": full, "bare": {"title": "t", "work": "w"}}
    page = registry._parse_page(raw_page(groups=groups))
    group = page.group("full")
    assert {name: getattr(group, name) for name in full} == full
    assert page.group("bare") == registry.Group("bare", "t", "w", "speedup")
    assert page.group("bare").ceiling_label == "천장 대비"
    raw = raw_page()  # 목록은 고칠 수 없게 튜플로 바뀝니다
    assert page.gpu_sections == tuple(raw["gpu_sections"]) and page.cuda_only == ()
    assert page.overview == tuple(raw["overview"])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"groups": {"g": {"title": "t", "work": "w", "conclusion": "nope"}}},
         "tip4: 묶음 g의 conclusion 'nope'"),
        ({"groups": {"g": {"title": "t", "work": "w", "inputs": "make"}}},
         "tip4: 묶음 g에 inputs가 있으면 baseline, recommended, sizes도 필요합니다"),
        ({"sweeps": {"s": {"title": "t", "x": "n", "x_label": "n", "baseline": "create-then-copy",
                           "variant": "nope"}}},
         "tip4: 스윕 s의 requires 또는 변형 이름이 잘못되었습니다"),
        ({"sweeps": {"s": {"title": "t", "x": "n", "x_label": "n", "baseline": "create-then-copy",
                           "variant": "create-on-device", "requires": "tpu"}}},
         "tip4: 스윕 s의 requires 또는 변형 이름이 잘못되었습니다"),
        ({"colour": "red"}, "tip4: .*colour"),
        ({"section": "elsewhere"}, "tip4: section 또는 requires 값이 잘못되었습니다"),
        ({"requires": "gpu"}, "tip4: section 또는 requires 값이 잘못되었습니다"),
        ({"not_applicable": ""}, "tip4: requires가 any가 아니면 not_applicable 이유가 필요합니다"),
        ({"overview": [{"group": "nope", "label": "x"}]}, "nope"),
    ],
)  # fmt: skip
def test_a_wrong_registry_entry_stops_with_a_korean_message_naming_the_page(changes, message):
    raw = raw_page(**changes)
    with pytest.raises(registry.RegistryError, match=message):
        registry._parse_page(raw)


def test_the_same_id_twice_is_refused(tmp_path):
    text = registry.REGISTRY.read_text(encoding="utf-8")
    twice = tmp_path / "pages.toml"
    first = text.index("\n[[page]]\n")
    second = text.index("\n[[page]]\n", first + 1)
    twice.write_text(text + "\n" + text[first:second], encoding="utf-8")
    with pytest.raises(registry.RegistryError, match="같은 id가 두 번 나옵니다"):
        registry.load(twice)
    with pytest.raises(registry.RegistryError, match="'no-such-page' 페이지가 없습니다"):
        registry.by_id("no-such-page")
