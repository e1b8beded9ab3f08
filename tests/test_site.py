"""사이트 전체 테스트: 빌드, 끼워 넣기, 손으로 쓴 코드 금지, 복사한 코드의 실행, 외부 요청 없음."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hooks.snippet_check import INCLUDE, find_problem
from tests.site_build import ROOT, copy_project, mkdocs_build, section_lines

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\w*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
# 히라가나, 가타카나, 반각 가타카나, 한자(CJK 통합 한자): 한국어 본문에는 어느 것도 쓰지 않습니다.
JAPANESE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u4e00-\u9fff]")
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)


def page_id(path: Path) -> str:
    return str(path.relative_to(DOCS))


def test_normal_build_redraws_no_chart_and_runs_no_notebook(built_site, tmp_path):
    """편집자가 `mkdocs serve`로 고칠 때마다 겪는 빌드가 빠른 까닭을 셉니다(시간은 2코어 CI에서
    흔들려서 재지 않습니다): 차트는 `.cache/charts/`에서 읽어 matplotlib으로 다시 그리지 않고,
    노트북은 실행하지 않습니다. built_site가 같은 입력으로 캐시를 이미 채웠습니다."""
    charts = ROOT / ".cache" / "charts"
    before = {path.name: path.stat().st_mtime_ns for path in charts.glob("*.svg")}
    result = mkdocs_build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    after = {path.name: path.stat().st_mtime_ns for path in charts.glob("*.svg")}
    assert after == before  # 새로 그리거나 다시 쓴 차트가 없습니다
    if any((ROOT / "results").glob("*.json")):
        assert before  # 결과가 있으면 차트가 있고, 그 차트를 캐시에서 읽었습니다
    notebook = (tmp_path / "site" / "notebooks" / "tip4_create_on_device.html").read_text("utf-8")
    assert "실행하지 않고 빌드해서 출력이 없습니다" in notebook


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_snippet_reference_exists(page):
    problems = [find_problem(ROOT, t) for t in INCLUDE.findall(page.read_text(encoding="utf-8"))]
    assert [p for p in problems if p] == []


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        ("snippets/tip4_create_on_device.py:no_such_section", '구역 "no_such_section"'),
        ("snippets/no_such_file.py:fast", "no_such_file.py이(가) 없습니다"),
        ("snippets/tip4_create_on_device.py:10:20", "줄 번호 대신"),
    ],
)
def test_broken_snippet_reference_fails_the_build_naming_page_and_section(
    tmp_path, include, expected
):
    project = copy_project(tmp_path / "project")
    page = project / "docs" / "tips" / "04-create-on-device.md"
    page.write_text(page.read_text(encoding="utf-8") + f'\n```python\n--8<-- "{include}"\n```\n')
    result = mkdocs_build(project, tmp_path / "site")
    assert result.returncode != 0
    assert "tips/04-create-on-device.md" in result.stderr
    assert expected in result.stderr


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


def copied_blocks():
    """페이지의 Python 코드 블록을 독자가 복사했을 때의 모습 그대로 돌려줍니다."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for number, fence in enumerate(FENCE.finditer(text), 1):
            if fence["lang"] != "python":
                continue
            parts = []
            for target in INCLUDE.findall(fence["body"]):
                path, _, section = target.partition(":")
                source = (ROOT / path).read_text(encoding="utf-8")
                parts.append(section_lines(source, section) if section else source)
            yield f"{page_id(page)}#{number}", "\n".join(parts)


RUN_BLOCKS = """
import json, sys, traceback
failures = {}
for name, code in json.load(sys.stdin).items():
    try:
        exec(compile(code, name, "exec"), {"__name__": "copied_block"})
    except BaseException:
        failures[name] = traceback.format_exc(limit=2)
print(json.dumps(failures, ensure_ascii=False))
"""


def test_every_code_block_runs_when_copied_into_an_empty_file(tmp_path):
    blocks = dict(copied_blocks())
    assert len(blocks) >= 14
    # 저장소 밖의 빈 폴더에서 실행합니다. snippets 패키지를 몰래 import할 수 없습니다.
    result = subprocess.run(
        [sys.executable, "-c", RUN_BLOCKS],
        input=json.dumps(blocks),
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    failures = json.loads(result.stdout.strip().splitlines()[-1])
    assert failures == {}


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
