"""누구나 읽을 수 있는 사이트(P11)를, 배포되는 그대로 띄워 남이 만든 도구로 확인합니다.

- axe-core(axe-playwright-python이 싣고 오는 axe.min.js, requirements.txt에 버전 고정): 모든
  페이지를 두 너비(1280, 390)에서 기본 규칙 전부로, 밝은 화면(default)에서는 색에 따라 결과가
  달라지는 규칙(색 대비, 본문 속 링크 구별)으로 한 번 더 검사해 critical·serious 위반이 없어야
  합니다. 두 색 구성은 DOM과 ARIA가 같고 색만 다르므로 나머지 규칙은 두 번 돌려도 결과가 같습니다.
  코드 블록에서 색 계산의 입력이 모두 같은 토큰은 하나만 색 규칙으로 검사합니다(RUN_AXE_JS).
  규칙을 꺼서 통과시키지 않습니다.
- 사이트는 GitHub Pages처럼 site_url의 경로(/seven-tips/) 아래에서 띄우고, 없는 주소에는 404.html을
  돌려줍니다. 그 아래에서 모든 페이지(404 포함)의 내부 링크, 파일, 앵커가 살아 있어야 합니다.
- 빌드된 `<meta name="description">`이 mkdocs.yml의 site_description과 같고, 제목은 70자 이하입니다.
- 차트 글자는 휴대폰에서도 그려진 크기로 11px 이상이고, file://로 열어도 스타일과 링크가 살아
  있습니다(P6, USB 메모리).

브라우저 검사는 모두 한 Chromium에서 한 번에 돌리고(모듈 fixture), 페이지 여러 개를 동시에 엽니다.
2코어에서 axe가 가장 오래 걸리는 부분이라 CPU 수만큼 나눠 돌립니다. 페이지는 너비마다 한 번만 열고,
어두운 화면을 검사한 뒤 읽는 사람처럼 색 구성 단추로 밝은 화면으로 바꿔 색 규칙을 검사합니다.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import urlopen

import pytest
import yaml

from guide import registry
from tests.site_build import ROOT
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    MAX_PAGE_BYTES,
    VIEWPORTS,
    FirstVisit,
    missing_browser_reason,
    screenshot_path,
)

SCHEMES = ("slate", "default")  # 첫 방문의 기본값(어두운 화면)이 먼저입니다
# 색 구성에 따라 결과가 달라지는 axe 규칙. 첫 색 구성에서는 모든 규칙을 돌립니다.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# axe가 심각하다고 보는 등급. moderate·minor는 보고만 합니다(Material이 만드는 것이 남아 있습니다).
BLOCKING = {"critical", "serious"}
MIN_CHART_TEXT_PX = 11
MAX_TITLE = 70
NOT_FOUND_PROBE = "no/such/page.html"


def mkdocs_config() -> dict:
    """mkdocs.yml을 읽습니다. !ENV, !relative 같은 태그는 값 대신 None으로 둡니다."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


CONFIG = mkdocs_config()
SUBPATH = urlsplit(CONFIG["site_url"]).path  # "/seven-tips/"


def page_paths() -> list[str]:
    """빌드 없이 아는 모든 페이지: docs/의 Markdown, 레지스트리의 노트북, 404."""
    pages = [
        p.relative_to(ROOT / "docs").with_suffix(".html").as_posix()
        for p in (ROOT / "docs").rglob("*.md")
    ]
    pages += [f"notebooks/{page.snippet}.html" for page in registry.load()]
    return sorted(pages) + ["404.html"]


PAGES = page_paths()


# --- GitHub Pages처럼 하위 경로 아래에서 띄우기 ---------------------------------------------


class SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """SUBPATH 아래만 사이트로 보내고, 없는 주소에는 사이트의 404.html을 404로 돌려줍니다."""

    def log_message(self, format, *args):
        pass

    def translate_path(self, path):
        path = urlsplit(path).path
        if not path.startswith(SUBPATH):
            return str(Path(self.directory) / "\0없음")
        return super().translate_path("/" + path[len(SUBPATH) :])

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@contextlib.contextmanager
def serving(site_dir: Path):
    """site_dir을 http://127.0.0.1:<빈 포트>/seven-tips/ 에서 띄우고 그 주소를 줍니다."""
    handler = functools.partial(SubPathHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{SUBPATH}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def served(built_site):
    with serving(built_site) as url:
        yield url


# --- 한 Chromium에서 모든 브라우저 검사 ---------------------------------------------------


@dataclass
class BrowserFindings:
    axe_version: str = ""
    # (페이지, 너비 이름, 색 구성) → axe 위반 목록
    violations: dict[tuple[str, str, str], list[dict]] = field(default_factory=dict)
    # (페이지, 너비 이름) → 차트 글자의 가장 작은 그려진 크기(px). 차트가 없으면 없음
    chart_text_px: dict[tuple[str, str], float] = field(default_factory=dict)
    file_url_problems: list[str] = field(default_factory=list)
    # 휴대폰 너비에서 옆으로 넘치는 표 영역마다: 키보드 초점을 받고 → 키로 넘겼을 때 움직였는지
    keyboard_scroll: dict[str, list[dict]] = field(default_factory=dict)
    # (페이지, 너비 이름) → 첫 방문의 기록(test_browser.FirstVisit.summary)
    first_visits: dict[tuple[str, str], dict] = field(default_factory=dict)


def axe_source() -> str:
    return (resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")


def palette_of(site_dir: Path, scheme: str) -> dict:
    """빌드된 페이지의 색 구성 단추에서 Material이 localStorage에 저장하는 값을 만듭니다."""
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    for index, tag in enumerate(re.findall(r'<input class="md-option"[^>]*>', html)):
        attrs = dict(re.findall(r'data-md-color-(\w+)="([^"]*)"', tag))
        if attrs["scheme"] == scheme:
            return {"index": index, "color": attrs}
    raise AssertionError(f"색 구성 {scheme}의 단추가 없습니다")


# 그려진 차트 글자 크기: SVG 안의 글자 크기(사용자 단위)에 SVG가 줄어든 비율을 곱합니다.
# 보이는 차트 이미지마다 주소와 그려진 폭. 글자 크기는 SVG 파일에서 읽어 곱합니다(chart_text_px).
SHOWN_CHARTS_JS = """() => [...document.querySelectorAll('.result-chart img')]
  .filter(img => img.getBoundingClientRect().width > 0)
  .map(img => ({src: img.src, width: img.getBoundingClientRect().width}))"""


def chart_text_px(site_dir: Path, shown: list[dict]) -> float | None:
    """그려진 차트 글자 가운데 가장 작은 크기(px): SVG의 글자 크기 × 그려진 폭 / viewBox 폭."""
    sizes = []
    for image in shown:
        path = unquote(urlsplit(image["src"]).path)[len(SUBPATH) :]
        svg = (site_dir / path).read_text(encoding="utf-8")
        view_width = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+)', svg)[1])
        smallest = min(float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg))
        sizes.append(smallest * image["width"] / view_width)
    return min(sizes, default=None)


# file://로 연 홈: 스타일시트가 적용되었고(머리글 색), 메뉴 링크가 가리키는 파일이 모두 있습니다.
FILE_URL_JS = """() => ({
  sheets: [...document.styleSheets].filter(s => s.href).length,
  header: getComputedStyle(document.querySelector('.md-header')).backgroundColor,
  links: [...document.querySelectorAll('.md-nav--primary a.md-nav__link')].map(a => a.href),
})"""


# axe를 돌립니다. 색 규칙은 코드 블록의 글자 조각(토큰)마다 같은 계산을 되풀이해서, 코드가 긴
# 페이지에서는 axe 시간의 대부분이었습니다. 색 대비의 답은 글자색, 뒤의 배경색, 글자 크기와 굵기,
# 불투명도, 그림자로 정해지므로, 이 값이 모두 같고 `pre` 안의 클래스 사슬도 같은 토큰은 한 무리로
# 보고 무리마다 하나만 색 규칙으로 검사합니다(나머지 규칙은 모든 요소를 봅니다). 규칙을 끄지는
# 않습니다. 같은 답이 나올 요소를 두 번 재지 않을 뿐입니다.
RUN_AXE_JS = """async ({allRules, colourRules}) => {
  const background = element => {
    for (let node = element; node; node = node.parentElement) {
      const colour = getComputedStyle(node).backgroundColor;
      if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
    }
    return 'none';
  };
  const keyOf = token => {
    const style = getComputedStyle(token), classes = [];
    for (let node = token; node && node.tagName !== 'PRE'; node = node.parentElement) {
      classes.push(node.className);
    }
    return [classes.join('|'), style.color, background(token), style.fontSize, style.fontWeight,
            style.opacity, style.textShadow, token.checkVisibility()].join(';');
  };
  const seen = new Set(), repeated = [];
  for (const token of document.querySelectorAll('pre span:not(:has(*))')) {
    const key = keyOf(token);
    if (seen.has(key)) repeated.push(token); else seen.add(key);
  }
  const colour = await axe.run({include: [document], exclude: repeated},
                               {resultTypes: ['violations'], runOnly: colourRules});
  const violations = [...colour.violations];
  if (allRules) {
    const off = Object.fromEntries(colourRules.map(rule => [rule, {enabled: false}]));
    const rest = await axe.run(document, {resultTypes: ['violations'], rules: off});
    violations.push(...rest.violations);
  }
  return {version: colour.testEngine.version, violations: violations};
}"""


# 색 구성 단추(숨은 라디오 입력)를 누르고, 색이 바뀌는 CSS 전환이 끝날 때까지 기다립니다.
SWITCH_SCHEME_JS = """async index => {
  document.getElementById('__palette_' + index).click();
  const transitions = document.getAnimations().filter(a => a instanceof CSSTransition);
  await Promise.all(transitions.map(transition => transition.finished));
}"""


async def keyboard_scrolls(tab) -> list[dict]:
    """넘치는 표·차트 영역마다 초점을 주고 오른쪽 화살표를 눌러 옆으로 넘어가는지 봅니다."""
    moved = []
    regions = tab.locator(":is(.table-scroll, .chart-scroll)")
    for index in range(await regions.count()):
        region = regions.nth(index)
        if not await region.evaluate("e => e.scrollWidth > e.clientWidth + 1"):
            continue
        await region.focus()
        await tab.keyboard.press("ArrowRight")
        # 키보드 스크롤은 부드럽게 움직이므로 잠깐(최대 1초) 기다립니다.
        state = await region.evaluate(
            """async e => {
              for (let i = 0; i < 20 && e.scrollLeft <= 0; i++) {
                await new Promise(done => setTimeout(done, 50));
              }
              return {label: e.getAttribute('aria-label'), focused: document.activeElement === e,
                      left: e.scrollLeft};
            }"""
        )
        moved.append(state)
    return moved


async def scan_site(served_url: str, site_dir: Path, pages: list[str] = PAGES) -> BrowserFindings:
    from playwright.async_api import async_playwright

    findings = BrowserFindings()
    axe = axe_source()
    jobs: asyncio.Queue = asyncio.Queue()
    # 큰 페이지부터 나눠 주어, 코드가 많은 페이지 하나가 끝에 혼자 남지 않게 합니다.
    for page_path in sorted(pages, key=lambda p: -(site_dir / p).stat().st_size):
        for viewport in VIEWPORTS:
            jobs.put_nowait((page_path, viewport))

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )

        async def open_tab(viewport: str):
            context = await browser.new_context(viewport=VIEWPORTS[viewport])
            palette = json.dumps(json.dumps(palette_of(site_dir, SCHEMES[0])))
            # Material은 색 구성을 "<사이트 경로>.__palette"에 저장하고 첫 그림 전에 읽습니다.
            await context.add_init_script(f"localStorage.setItem('{SUBPATH}.__palette', {palette})")
            await context.add_init_script(axe)
            visit = FirstVisit(site_dir, SUBPATH)
            # 가로채기(route)를 켜면 HTTP 캐시를 쓰지 않으므로 페이지마다 첫 방문처럼 모두 받습니다.
            await context.route("**/*", visit.route)
            tab = await context.new_page()
            visit.listen(tab)
            return tab, visit

        async def check(tab, page_path: str, viewport: str, scheme: str) -> None:
            shown = await tab.get_attribute("body", "data-md-color-scheme")
            assert shown == scheme, f"{page_path}: 색 구성이 {scheme}이 아니라 {shown}입니다"
            # 첫 색 구성에서는 모든 규칙을, 다른 색 구성에서는 색 규칙만 돌립니다(RUN_AXE_JS).
            run = {"allRules": scheme == SCHEMES[0], "colourRules": COLOUR_RULES}
            result = await tab.evaluate(RUN_AXE_JS, run)
            findings.axe_version = result["version"]
            findings.violations[page_path, viewport, scheme] = result["violations"]

        async def worker():
            tabs = {}
            while not jobs.empty():
                page_path, viewport = jobs.get_nowait()
                if viewport not in tabs:
                    tabs[viewport] = await open_tab(viewport)
                tab, visit = tabs[viewport]
                visit.start()
                url = served_url + (NOT_FOUND_PROBE if page_path == "404.html" else page_path)
                await tab.goto(url, wait_until="load")
                findings.first_visits[page_path, viewport] = await visit.summary(tab)
                if os.environ.get("SCREENSHOTS"):
                    await tab.screenshot(path=screenshot_path(page_path, viewport), full_page=True)
                await check(tab, page_path, viewport, SCHEMES[0])
                shown = await tab.evaluate(SHOWN_CHARTS_JS)
                findings.chart_text_px[page_path, viewport] = chart_text_px(site_dir, shown)
                # 다시 불러오지 않고, 읽는 사람처럼 색 구성 단추로 바꿉니다.
                for scheme in SCHEMES[1:]:
                    index = palette_of(site_dir, scheme)["index"]
                    await tab.evaluate(SWITCH_SCHEME_JS, index)
                    await check(tab, page_path, viewport, scheme)
                if viewport == "phone":
                    findings.keyboard_scroll[page_path] = await keyboard_scrolls(tab)
            for tab, _ in tabs.values():
                await tab.context.close()

        await asyncio.gather(*(worker() for _ in range(max(1, os.cpu_count() or 1))))

        context = await browser.new_context()
        tab = await context.new_page()
        failed = []
        tab.on("requestfailed", lambda request: failed.append(request.url))
        await tab.goto((site_dir / "index.html").as_uri(), wait_until="load")
        state = await tab.evaluate(FILE_URL_JS)
        if state["sheets"] < 3 or state["header"] in ("", "rgba(0, 0, 0, 0)"):
            findings.file_url_problems.append(f"스타일이 적용되지 않았습니다: {state}")
        for link in state["links"]:
            target = Path(unquote(urlsplit(link).path))
            if not link.startswith("file://") or not target.is_file():
                findings.file_url_problems.append(f"메뉴 링크가 파일을 가리키지 않습니다: {link}")
        findings.file_url_problems += [f"요청 실패: {url}" for url in failed]
        await context.close()
        await browser.close()
    return findings


@pytest.fixture(scope="module")
def findings(served, built_site) -> BrowserFindings:
    reason = missing_browser_reason()
    try:
        axe_source()
    except ModuleNotFoundError:
        reason = reason or "axe-core가 없습니다: pip install -r requirements.txt"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI에서는 접근성 검사를 건너뛸 수 없습니다. {reason}")
        pytest.skip(f"접근성 검사를 건너뜁니다. {reason}")
    return asyncio.run(scan_site(served, built_site))


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


def test_no_broken_internal_link_when_served_under_the_sub_path(served, built_site):
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
    extensions = [ext for ext in CONFIG["markdown_extensions"] if isinstance(ext, dict)]
    permalink = next(ext["toc"] for ext in extensions if "toc" in ext)["permalink_title"]
    assert f'title="{permalink}"' in (built_site / "tips" / "01-num-workers.html").read_text(
        encoding="utf-8"
    )
    assert "Permanent link" not in index
