"""누구나 읽을 수 있는 사이트(P11)를, 배포되는 그대로 띄워 남이 만든 도구로 확인합니다.

- axe-core(axe-playwright-python이 싣고 오는 axe.min.js, requirements.txt에 버전 고정): 모든
  페이지를 두 너비(1280, 390)에서 기본 규칙 전부로, 밝은 화면(default)에서는 색에 따라 결과가
  달라지는 규칙(색 대비, 본문 속 링크 구별)으로 한 번 더 검사해 critical·serious 위반이 없어야
  합니다. 두 색 구성은 DOM과 ARIA가 같고 색만 다르므로 나머지 규칙은 두 번 돌려도 결과가 같습니다.
  코드 블록에서 색 계산의 입력이 모두 같은 토큰은 하나만 색 대비 규칙으로 검사합니다(RUN_AXE_JS).
  규칙을 꺼서 통과시키지 않습니다.
- 사이트는 GitHub Pages처럼 site_url의 경로(/seven-tips/) 아래에서 띄우고, 없는 주소에는 404.html을
  돌려줍니다. 그 아래에서 모든 페이지(404 포함)의 내부 링크, 파일, 앵커가 살아 있어야 합니다.
- 빌드된 `<meta name="description">`이 mkdocs.yml의 site_description과 같고, 제목은 70자 이하입니다.
- 차트 글자는 휴대폰에서도 그려진 크기로 11px 이상이고, file://로 열어도 스타일과 링크가 살아
  있습니다(P6, USB 메모리).

브라우저 검사는 모두 한 Chromium에서 한 번에 돌립니다(tests/site_scan.py). 페이지는 너비마다 한 번만
열고, 어두운 화면을 검사한 뒤 읽는 사람처럼 색 구성 단추로 밝은 화면으로 바꿔 색 규칙을 검사합니다.
2코어에서 몇 분 걸리는 검사라 이 파일은 `browser` 묶음입니다(평소 `pytest`는 돌리지 않습니다).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import urlopen

import pytest

from tests import site_scan
from tests.site_scan import (
    CONFIG,
    NOT_FOUND_PROBE,
    PAGES,
    SCHEMES,
    BrowserFindings,
    empty_search_index,
    scan_site,
    serving,
)
from tests.test_browser import MAX_PAGE_BYTES, VIEWPORTS, FirstVisit

# axe가 심각하다고 보는 등급. moderate·minor는 보고만 합니다(Material이 만드는 것이 남아 있습니다).
BLOCKING = {"critical", "serious"}
MIN_CHART_TEXT_PX = 11
MAX_TITLE = 70


@pytest.fixture(scope="module")
def served(built_site):
    with serving(built_site) as url:
        yield url


pytestmark = [pytest.mark.browser, pytest.mark.timeout(site_scan.TIMEOUT_S)]


@pytest.fixture(scope="module")
def findings(built_site) -> BrowserFindings:
    """모든 페이지의 브라우저 검사 결과(tests/site_scan.py). 한 번 검사해 이 파일이 나눠 씁니다."""
    reason = site_scan.missing_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI에서는 접근성 검사를 건너뛸 수 없습니다. {reason}")
        pytest.skip(f"접근성 검사를 건너뜁니다. {reason}")
    return site_scan.scan(built_site)


def describe(violation: dict) -> str:
    nodes = violation["nodes"]
    where = "; ".join(" ".join(map(str, n["target"])) for n in nodes[:3])
    summary = nodes[0].get("failureSummary", "").replace("\n", " ")[:300] if nodes else ""
    return f"{violation['id']}({violation['impact']}, {len(nodes)}곳): {where} — {summary}"


@pytest.mark.parametrize("page_path", PAGES)
def test_axe_finds_no_critical_or_serious_violation(findings, page_path):
    problems = [
        f"{viewport}/{scheme}: {describe(v)}"
        for viewport in VIEWPORTS
        for scheme in SCHEMES
        for v in findings.violations[page_path, viewport, scheme]
        if v["impact"] in BLOCKING
    ]
    assert problems == [], f"axe-core {findings.axe_version}"


def test_the_colour_pass_sees_the_light_scheme_after_the_switch(built_site, tmp_path, findings):
    """밝은 화면(default)에서만 보이지 않는 글자를 심으면, 단추로 바꾼 뒤의 색 검사가 그것만
    찾습니다. 색 구성을 바꾸지 못하거나 전환이 끝나기 전에 검사하면 이 테스트가 실패합니다."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    # 본문의 글 하나와, 코드 블록에서 같은 무리(RUN_AXE_JS)로 묶일 토큰 셋
    planted = (
        "<style>[data-md-color-scheme=default] .planted {color: #fafafa}</style>"
        '<p class="planted">밝은 화면에서만 안 보이는 글</p>'
        '<div class="highlight"><pre><span></span><code><span class="n">loader</span> '
        '<span class="n planted">batch_size</span> <span class="n planted">num_workers</span> '
        '<span class="n planted">pin_memory</span></code></pre></div>'
    )
    html = (built_site / "index.html").read_text(encoding="utf-8")
    (site / "index.html").write_text(html.replace("</article>", planted + "</article>", 1))
    with serving(site) as url:
        scan = asyncio.run(scan_site(url, site, pages=["index.html"]))
    contrast = {
        key: [node["html"] for v in found if v["id"] == "color-contrast" for node in v["nodes"]]
        for key, found in scan.violations.items()
    }
    for viewport in VIEWPORTS:
        assert contrast["index.html", viewport, "slate"] == []
        found = contrast["index.html", viewport, "default"]
        assert [html for html in found if html.startswith("<p")] == [
            '<p class="planted">밝은 화면에서만 안 보이는 글</p>'
        ]
        assert [html for html in found if html.startswith("<span")] == [
            '<span class="n planted">batch_size</span>'  # 같은 무리의 나머지 둘은 검사하지 않습니다
        ]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("page_path", [page for page in PAGES if page != "404.html"])
def test_every_page_loads_cleanly_at_both_sizes(findings, page_path, viewport):
    """첫 방문(빈 캐시)에서 127.0.0.1 밖으로 요청이 없고(P6), 콘솔 오류와 깨진 그림이 없고,
    페이지가 옆으로 넘치지 않고(코드와 표는 그 안에서만 스크롤), gzip으로 받는 양이 상한
    아래입니다."""
    visit = findings.first_visits[page_path, viewport]
    assert visit["foreign_requests"] == [], "127.0.0.1 밖으로 요청을 보냈습니다(P6)"
    assert visit["console_errors"] == []
    assert visit["broken_images"] == []
    assert visit["overflow_px"] <= 0, f"{viewport}에서 페이지가 옆으로 넘칩니다"
    assert visit["gzipped_bytes"] < MAX_PAGE_BYTES, "첫 방문에 받는 양이 너무 많습니다"


def test_the_scan_skips_building_the_search_index_but_counts_its_bytes(built_site):
    # 검사는 검색하지 않으므로 문서가 없는 색인으로 답하지만(site_scan.empty_search_index), 첫 방문
    # 전송량에는 진짜 색인 파일이 들어가야 위 상한 검사가 실제 방문과 같은 양을 봅니다.
    class Route:
        async def fulfill(self, body, content_type):
            self.body = json.loads(body)

    visit, route = FirstVisit(built_site, "/"), Route()
    asyncio.run(empty_search_index(built_site, visit)(route))
    real = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert real["docs"] and route.body == {**real, "docs": []}
    assert visit.local_files == {built_site / "search" / "search_index.json"}


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_chart_text_stays_legible_at_both_widths(findings, viewport):
    sizes = {p: px for (p, v), px in findings.chart_text_px.items() if v == viewport and px}
    if not sizes:
        pytest.skip("results/에 측정이 없어 그린 차트가 없습니다")
    small = {p: round(px, 1) for p, px in sizes.items() if px < MIN_CHART_TEXT_PX}
    assert small == {}, f"{viewport}에서 차트 글자가 {MIN_CHART_TEXT_PX}px보다 작습니다"


def test_wide_tables_and_charts_scroll_with_the_keyboard_on_a_phone(findings):
    regions = [r | {"page": p} for p, found in findings.keyboard_scroll.items() for r in found]
    if not regions:
        pytest.skip("휴대폰 너비에서 넘치는 표나 차트가 없습니다")
    stuck = [r for r in regions if not r["focused"] or r["left"] <= 0 or not r["label"]]
    assert stuck == []


def test_site_opened_from_files_keeps_styles_and_links(findings):
    assert findings.file_url_problems == []


# --- 하위 경로 아래의 링크 ------------------------------------------------------------------------


class References(HTMLParser):
    """페이지가 가리키는 주소(a, link, script, img, source, iframe)와 페이지 안의 id를 모읍니다."""

    ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src",
             "iframe": "src"}  # fmt: skip

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name"):
            if attrs.get(name):
                self.ids.add(attrs[name])
        ref = attrs.get(self.ATTRS.get(tag, ""))
        if ref:
            self.refs.append(ref)


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except HTTPError as error:
        return error.code, error.read()


def test_no_broken_internal_link_when_served_under_the_sub_path(served, built_site):  # noqa: C901 (링크 종류마다 한 갈래)
    """GitHub Pages처럼 /seven-tips/ 아래에 올렸을 때, 404를 포함한 모든 페이지의 내부 링크와
    앵커가 살아 있는지 HTTP로 확인합니다. 404 페이지는 깊은 없는 주소에서 엽니다."""
    origin = urlsplit(served)
    pages = [p.relative_to(built_site).as_posix() for p in built_site.rglob("*.html")]
    pages = [p for p in pages if p != "404.html"] + [f"a/b/{NOT_FOUND_PROBE}"]
    parsed: dict[str, References] = {}
    targets: dict[str, set[str]] = {}  # 대상 주소(앵커 없이) → 그 주소를 가리키는 곳
    fragments: list[tuple[str, str, str]] = []
    for page in pages:
        url = served + page
        status, body = fetch(url)
        expected = 404 if page.endswith(NOT_FOUND_PROBE) else 200
        assert status == expected, f"{url}: {status}"
        refs = References()
        refs.feed(body.decode("utf-8"))
        parsed[url] = refs
        for ref in refs.refs:
            absolute = urljoin(url, ref)
            split = urlsplit(absolute)
            if split.scheme not in ("http", "https") or split.netloc != origin.netloc:
                continue
            target = split._replace(fragment="").geturl()
            targets.setdefault(target, set()).add(page)
            if split.fragment:
                fragments.append((page, target, unquote(split.fragment)))
    assert len(targets) > 50, "링크를 거의 찾지 못했습니다"
    broken = []
    for target, sources in sorted(targets.items()):
        if target in parsed:
            continue
        status, body = fetch(target)
        if status != 200:
            broken.append(f"{target} ({status}) ← {sorted(sources)[:3]}")
        elif urlsplit(target).path.endswith(".html"):
            parsed[target] = References()
            parsed[target].feed(body.decode("utf-8"))
    for page, target, fragment in fragments:
        if target in parsed and fragment not in parsed[target].ids:
            broken.append(f"{page} → {target}#{fragment} (앵커 없음)")
    assert broken == []


# --- 메타데이터 -----------------------------------------------------------------------------------


class Head(HTMLParser):
    def __init__(self):
        super().__init__()
        self.description: str | None = None
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "meta" and attrs.get("name") == "description":
            self.description = attrs.get("content")
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def built_heads(site_dir: Path) -> dict[str, Head]:
    heads = {}
    for path in sorted(site_dir.rglob("*.html")):
        head = Head()
        head.feed(path.read_text(encoding="utf-8"))
        heads[path.relative_to(site_dir).as_posix()] = head
    return heads


def test_meta_description_is_the_whole_site_description(built_site):
    # 곧은 큰따옴표가 있으면 브라우저와 검색 엔진은 content를 거기서 끊어 읽습니다.
    expected = " ".join(CONFIG["site_description"].split())
    heads = built_heads(built_site)
    assert {p: h.description for p, h in heads.items() if h.description != expected} == {}


def test_page_titles_fit_in_seventy_characters(built_site):
    long = {p: h.title for p, h in built_heads(built_site).items() if len(h.title) > MAX_TITLE}
    assert long == {}


def test_deployed_address_and_korean_permalink_title(built_site):
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{CONFIG["site_url"]}index.html">' in index
    permalink = CONFIG["mdx_configs"]["toc"]["permalink_title"]  # MkDocs가 읽은 mkdocs.yml
    assert f'title="{permalink}"' in (built_site / "tips" / "01-num-workers.html").read_text(
        encoding="utf-8"
    )
    assert "Permanent link" not in index
