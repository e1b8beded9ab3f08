"""모든 페이지를 한 Chromium에서 열어 axe-core와 첫 방문 검사를 돌리는 브라우저 검사입니다.

무엇을 왜 검사하는지는 tests/test_accessibility.py에 있습니다. 여기는 검사를 돌리고 찾은 것을
모으는 부분입니다. 2코어에서 몇 분 걸리는 일이라 `browser` 묶음에 있습니다(평소 `pytest`는
돌리지 않습니다).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import os
import re
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

from guide import registry
from tests.site_build import ROOT
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORTS,
    FirstVisit,
    missing_browser_reason,
    screenshot_path,
)

# 검사 전체의 상한(pytest-timeout). 홀로 돌면 2코어에서 2분이 안 걸립니다.
TIMEOUT_S = 900

SCHEMES = ("slate", "default")  # 첫 방문의 기본값(어두운 화면)이 먼저입니다
# 색 구성에 따라 결과가 달라지는 axe 규칙. 첫 색 구성에서는 모든 규칙을 돌립니다.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
NOT_FOUND_PROBE = "no/such/page.html"


def mkdocs_config():
    """mkdocs.yml을 MkDocs처럼 읽습니다(!ENV의 값도 빌드와 같게 풉니다)."""
    from mkdocs.config import load_config

    return load_config(str(ROOT / "mkdocs.yml"))


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


SEARCH_INDEX = "search/search_index.json"


def empty_search_index(site_dir: Path, visit: FirstVisit):
    """검색 색인 요청에 문서가 없는 색인으로 답하는 가로채기. Material은 페이지를 열 때마다 색인을
    새로 만드는데(한 번에 0.3 CPU초; 한 코어에서 검사 전체가 256초 → 189초), 이 검사는 검색을
    보지 않습니다. 검색은 test_browser.py가 진짜 색인으로 확인하고, 첫 방문 전송량은 진짜 파일로
    셉니다."""
    real = site_dir / SEARCH_INDEX
    index = json.loads(real.read_text(encoding="utf-8"))
    body = json.dumps({**index, "docs": []})

    async def answer(route) -> None:
        visit.local_files.add(real)
        await route.fulfill(body=body, content_type="application/json")

    return answer


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


# axe를 돌립니다. 색 대비 규칙은 코드 블록의 글자 조각(토큰)마다 같은 계산을 되풀이해서, 코드가 긴
# 페이지에서는 axe 시간의 대부분이었습니다. 색 대비의 답은 글자색, 뒤의 배경색, 글자 크기와 굵기,
# 불투명도, 그림자로 정해지므로, 이 값이 모두 같고 `pre` 안의 클래스 사슬도 같은 토큰은 한 무리로
# 보고 무리마다 하나만 색 대비 규칙으로 검사합니다(나머지 규칙은 모든 요소를 봅니다). 규칙을 끄지는
# 않습니다. 같은 답이 나올 요소를 두 번 재지 않을 뿐입니다.
# 나머지 토큰은 axe.run의 exclude 목록이 아니라 색 대비 규칙이 요소를 고르는 함수(matches)에서
# 뺍니다. axe는 요소마다 exclude 목록 전체와 포함 관계를 따지므로, 토큰 3천 개짜리 페이지에서는
# 그 비교만 0.6초였습니다. DOM은 바꾸지 않습니다(표시 속성을 달면 axe가 보고하는 선택자가
# 달라집니다). 본문 속 링크 규칙(link-in-text-block)은 링크(a[href], [role=link])만 고르므로 토큰을
# 보지 않습니다.
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
  // axe의 규칙 객체(공개 API 밖)에서 고르는 함수를 잠시 감쌉니다.
  // axe 버전은 requirements.txt에 고정했습니다.
  const rule = axe._audit.rules.find(r => r.id === 'color-contrast');
  const matches = rule.matches, twins = new Set(repeated);
  rule.matches = (node, ...rest) => !twins.has(node) && matches.call(rule, node, ...rest);
  try {
    // 첫 색 구성에서는 기본 규칙 전부를 한 번에, 다른 색 구성에서는 색 규칙만 돌립니다.
    const options = {resultTypes: ['violations']};
    if (!allRules) options.runOnly = colourRules;
    const result = await axe.run(document, options);
    return {version: result.testEngine.version, violations: result.violations};
  } finally {
    rule.matches = matches;
  }
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
    # 접힌 부분(다른 CPU의 결과 등)은 읽는 사람이 펼친 다음 키보드로 넘깁니다.
    await tab.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
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


async def scan_site(  # noqa: C901 (페이지 × 너비 × 색 구성을 한 브라우저로 도는 한 루프)
    served_url: str, site_dir: Path, pages: list[str] = PAGES
) -> BrowserFindings:
    from playwright.async_api import async_playwright

    findings = BrowserFindings()
    axe = axe_source()
    jobs: asyncio.Queue = asyncio.Queue()
    # 큰 페이지부터 나눠 주어, 코드가 많은 페이지 하나가 끝에 혼자 남지 않게 합니다.
    for page_path in sorted(pages, key=lambda p: -(site_dir / p).stat().st_size):
        for viewport in VIEWPORTS:
            jobs.put_nowait((page_path, viewport))

    async with async_playwright() as playwright:
        # 시간 한도(기본 30초)는 끕니다. 남는 CPU로만 돌면 다른 테스트가 두 코어를 다 쓰는 동안
        # 한동안 멈춰 있을 수 있습니다. 전체 상한은 finish가 지킵니다.
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=0
        )

        async def new_context(**options):
            context = await browser.new_context(**options)
            context.set_default_timeout(0)
            return context

        async def open_tab(viewport: str):
            context = await new_context(viewport=VIEWPORTS[viewport])
            palette = json.dumps(json.dumps(palette_of(site_dir, SCHEMES[0])))
            # Material은 색 구성을 "<사이트 경로>.__palette"에 저장하고 첫 그림 전에 읽습니다.
            await context.add_init_script(f"localStorage.setItem('{SUBPATH}.__palette', {palette})")
            await context.add_init_script(axe)
            visit = FirstVisit(site_dir, SUBPATH)
            # 가로채기(route)를 켜면 HTTP 캐시를 쓰지 않으므로 페이지마다 첫 방문처럼 모두 받습니다.
            await context.route("**/*", visit.route)
            await context.route(f"**{SUBPATH}{SEARCH_INDEX}", empty_search_index(site_dir, visit))
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

        context = await new_context()
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


def missing_reason() -> str | None:
    """이 검사에 필요한 것(Chromium, Playwright, axe-core) 가운데 없는 것을 말합니다."""
    reason = missing_browser_reason()
    try:
        axe_source()
    except ModuleNotFoundError:
        reason = reason or "axe-core가 없습니다: pip install -r requirements.txt"
    return reason


def scan(site_dir: Path) -> BrowserFindings:
    """site_dir을 띄워 모든 페이지를 검사하고 찾은 것을 돌려줍니다."""
    with serving(site_dir) as url:
        return asyncio.run(scan_site(url, site_dir))
