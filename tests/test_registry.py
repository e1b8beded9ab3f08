"""guide/pages.toml(레지스트리)의 테스트: 측정하는 페이지는 레지스트리 한 곳에만 적고, 나머지
(메뉴, 제목, 노트북, 결과, 홈 표)는 모두 거기서 나오는지 확인합니다."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from html import unescape

import pytest

from benchmarks import results_file
from guide import registry
from tests.results_sample import entry, sample_document, write
from tests.site_build import ROOT, copy_project, mkdocs_build

PAGES = registry.load()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_every_page_has_its_snippet_benchmark_test_and_doc(page):
    assert page.snippet_path.is_file()
    assert (ROOT / "tests" / f"test_{page.snippet}.py").is_file()
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
    for section in ("slow", "fast"):
        assert f'--8<-- "snippets/{page.snippet}.py:{section}"' in doc


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_registry_entries_are_complete(page):
    assert page.groups and page.variants and page.overview
    for group in page.groups.values():
        assert group.title and group.work
    # 요약과 "비교하는 것"은 측정값을 적지 않습니다(P2): 숫자 뒤에 배나 단위가 없습니다.
    for text in (page.summary, page.compares, *page.variants.values()):
        assert not re.search(r"\d+(\.\d+)?\s*(배|%|ms|GB/s|TFLOP)", text), text


def test_ids_slugs_and_numbers_are_unique_within_sections():
    assert len({p.id for p in PAGES}) == len(PAGES)
    assert len({p.doc for p in PAGES}) == len(PAGES)
    for section in registry.SECTIONS:
        numbers = [p.number for p in registry.pages(section)]
        assert numbers == list(range(1, len(numbers) + 1)), section


# 팁의 목록이나 개수를 레지스트리 밖에 적은 흔적들입니다.
HARD_CODED = [
    re.compile(r"range\(1,\s*8\)"),
    re.compile(r"tip\[1-7\]"),
    re.compile(r"stem\[3\]"),
    re.compile(r"""["']tip1["'].{0,80}["']tip2["'].{0,80}["']tip3["']""", re.S),
    re.compile(r"^\s*-\s.*tips/0\d-[\w-]+\.md", re.M),
    re.compile(r"notebooks/tip\d_\w+\.ipynb"),
]


def code_files():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    allowed = {"guide/pages.toml", "tests/test_registry.py"}
    for name in listed:
        if name in allowed or not name.endswith((".py", ".yml", ".yaml", ".toml", ".html")):
            continue
        if (ROOT / name).is_file():
            yield name


def test_no_list_or_count_of_pages_is_written_outside_the_registry():
    found = [
        f"{name}: {pattern.pattern}"
        for name in code_files()
        for pattern in HARD_CODED
        if pattern.search((ROOT / name).read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_hard_coded_list_check_can_fail():
    assert any(p.search('for n in range(1, 8):\n    tip = f"tip{n}"') for p in HARD_CODED)
    assert any(p.search('  - "팁 1": tips/01-num-workers.md') for p in HARD_CODED)


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

## 코드 {{ #code }}

```python
--8<-- "snippets/demo_page.py:slow"
--8<-- "snippets/demo_page.py:fast"
```

## 측정 결과 {{ #results }}

<!-- results -->
"""


def test_an_extra_registry_entry_gets_nav_title_notebook_and_results(tmp_path):
    project = copy_project(tmp_path / "project")
    number = len(registry.pages("beyond")) + 1
    with open(project / "guide" / "pages.toml", "a", encoding="utf-8") as toml:
        toml.write(DEMO_ENTRY.format(number=number))
    # 스니펫과 벤치마크는 팁 4의 것을 빌려 씁니다(구역 이름이 같습니다).
    shutil.copy(
        ROOT / "snippets" / "tip4_create_on_device.py", project / "snippets" / "demo_page.py"
    )
    (project / "benchmarks" / "bench_demo_page.py").write_text('PAGE = "demo"\n', encoding="utf-8")
    (project / "docs" / "beyond").mkdir(exist_ok=True)
    (project / "docs" / "beyond" / f"{number:02d}-demo.md").write_text(
        DEMO_PAGE.format(), encoding="utf-8"
    )
    doc = sample_document(project)
    doc["benchmarks"] += [
        entry("demo", "slow", "pair", "slow", "baseline", 0.00377, 0.00001, project,
              modules=DEMO_MODULES, params={"n": 4}),
        entry("demo", "fast", "pair", "fast", "recommended", 0.00131, 0.00001, project,
              modules=DEMO_MODULES, params={"n": 4}),
    ]  # fmt: skip
    shutil.rmtree(project / "results", ignore_errors=True)
    write(project / "results" / f"{results_file.results_name(doc['environment'])}.json", doc)
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr[-3000:]
    page = unescape((site / "beyond" / f"{number:02d}-demo.html").read_text(encoding="utf-8"))
    assert "<h1" in page and "시험용 페이지" in re.search(r"<h1[^>]*>(.*?)<", page)[1]
    assert "시험용 묶음 (크기 4)" in page and "2.88배" in page  # 3.77 ms / 1.31 ms
    assert (site / "notebooks" / "demo_page.html").is_file()
    home = unescape((site / "index.html").read_text(encoding="utf-8"))
    assert "시험용 비교" in home
    assert f"beyond/{number:02d}-demo.html" in (site / "index.html").read_text(encoding="utf-8")


def test_every_page_links_to_its_source_in_the_one_repository(built_site):
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    repo = config["extra"]["repository"]
    owner_name = repo.removeprefix("https://github.com/")
    guard = (ROOT / ".github" / "workflows" / "gpu-benchmark.yml").read_text(encoding="utf-8")
    assert f"github.repository == '{owner_name}'" in guard
    html = (built_site / "tips" / "04-create-on-device.html").read_text(encoding="utf-8")
    assert f'href="{repo}/blob/main/docs/tips/04-create-on-device.md"' in html
    assert f'href="{repo}/blob/main/snippets/tip4_create_on_device.py"' in html
