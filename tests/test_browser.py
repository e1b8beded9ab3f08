"""독자가 만나는 그대로, 진짜 브라우저(Debian의 Chromium)로 사이트를 확인합니다.

테스트가 직접 빌드한 사이트를 127.0.0.1에서 띄우고 검색, 탭, 복사 단추, 색 구성 선택, 404 페이지,
적대적인 결과 파일을 확인합니다. 모든 페이지를 데스크톱(1280×900)과 휴대폰(390×844) 크기로 처음
여는 검사(외부 요청, 콘솔 오류, 깨진 그림, 가로 넘침, 전송량)는 같은 페이지를 두 번 열지 않도록
접근성 검사(tests/test_accessibility.py)가 페이지를 열 때 이 파일의 FirstVisit으로 함께 합니다.
`SCREENSHOTS=1`을 주면 그때 스크린숏을 test-output/screenshots/에 남깁니다(커밋하지 않음).
Chromium이 없으면 이 파일의 테스트는 이유를 밝히고 건너뜁니다. 단, CI(CI=true)에서는 실패합니다.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.site_build import ROOT, section_lines

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "test-output" / "screenshots"
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# 첫 방문에 받는 바이트의 상한. GitHub Pages처럼 gzip으로 보내는 서버 기준으로 셉니다.
MAX_PAGE_BYTES = 1_000_000


def missing_browser_reason() -> str | None:
    if not CHROMIUM.exists():
        return "Chromium(/usr/bin/chromium)이 없습니다: apt-get install -y chromium fonts-nanum"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright가 없습니다: pip install -r requirements.txt"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = missing_browser_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI에서는 브라우저 테스트를 건너뛸 수 없습니다. {reason}")
        pytest.skip(f"브라우저 테스트를 건너뜁니다. {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def site(built_site):
    """빌드한 사이트를 127.0.0.1의 빈 포트에서 띄우고 그 주소를 돌려줍니다."""
    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@functools.cache
def gzipped_size(path: Path) -> int:
    """gzip으로 보내는 서버(GitHub Pages 등)가 이 파일을 보낼 때의 크기입니다."""
    return len(gzip.compress(path.read_bytes()))


def site_pages(site_dir: Path) -> list[str]:
    pages = [p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html")]
    return sorted(p for p in pages if p != "404.html")


def is_foreign(url: str) -> bool:
    """이 컴퓨터의 시험 서버(127.0.0.1)가 아닌 곳으로 가는 요청인지."""
    return urlsplit(url).hostname != "127.0.0.1"


def record_errors(tab, errors: list[str]) -> None:
    """탭의 콘솔 오류와 잡히지 않은 예외를 errors에 모읍니다(동기·비동기 API 모두)."""
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.on("pageerror", lambda error: errors.append(str(error)))


class Visit:
    """한 탭에서 보낸 바깥 요청과 콘솔 오류를 기록합니다(동기 API, 이 파일의 테스트용)."""

    def __init__(self, browser, site, viewport, **context_options):
        self.site = site
        self.foreign_requests: list[str] = []
        self.console_errors: list[str] = []
        self.context = browser.new_context(viewport=VIEWPORTS[viewport], **context_options)
        self.context.route("**/*", self.route)
        self.page = self.context.new_page()
        record_errors(self.page, self.console_errors)

    def route(self, route):
        if is_foreign(route.request.url):
            self.foreign_requests.append(route.request.url)
            route.abort()
            return
        route.continue_()

    def open(self, page_path, settle=False):
        # load 이벤트면 문서, 스타일, 스크립트, 화면 안의 그림까지 받은 뒤입니다.
        # 그 뒤에 스크립트가 보내는 요청(검색 색인 등)까지 보려면 settle=True:
        # 0.5초 동안 요청이 멎을 때까지 기다립니다.
        self.page.goto(f"{self.site}/{page_path}", wait_until="load")
        if settle:
            self.page.wait_for_load_state("networkidle")
        return self.page

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser, site):
    visits = []

    def start(viewport="desktop", **context_options):
        visits.append(Visit(browser, site, viewport, **context_options))
        return visits[-1]

    yield start
    for v in visits:
        v.close()


# 차트는 loading="lazy"이고 다른 화면 모드의 그림은 숨겨져 있어 아직 받지 않았을 수 있습니다.
# 그래서 화면에 있든 없든 모든 <img>의 주소를 새 Image로 받아 디코딩해 봅니다.
BROKEN_IMAGES_JS = """
async () => {
  const broken = [];
  for (const img of document.querySelectorAll("img")) {
    const probe = new Image();
    probe.src = img.src;
    try { await probe.decode(); } catch { broken.push(img.src); continue; }
    if (probe.naturalWidth === 0) broken.push(img.src);
  }
  return broken;
}
"""


def screenshot_path(page_path: str, viewport: str) -> str:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return str(SCREENSHOTS / f"{page_path.replace('/', '_').removesuffix('.html')}-{viewport}.png")


class FirstVisit:
    """탭 하나에서 페이지를 열 때마다 보낸 요청, 콘솔 오류, 받은 파일을 기록합니다(비동기 API).

    모든 페이지의 첫 방문 검사는 접근성 검사(tests/test_accessibility.py)가 페이지를 열 때 함께
    합니다. 같은 페이지를 두 번 열지 않기 위해서입니다."""

    def __init__(self, site_dir: Path, mount_path: str):
        self.site_dir, self.mount_path = site_dir, mount_path
        self.foreign_requests: list[str] = []
        self.console_errors: list[str] = []
        self.local_files: set[Path] = set()

    def start(self) -> None:
        """다음 페이지를 위해 기록을 비웁니다. 탭의 리스너가 같은 목록에 이어 쓰므로 제자리에서."""
        self.foreign_requests.clear()
        self.console_errors.clear()
        self.local_files.clear()

    def listen(self, tab) -> None:
        record_errors(tab, self.console_errors)

    async def route(self, route) -> None:
        if is_foreign(route.request.url):
            self.foreign_requests.append(route.request.url)
            await route.abort()
            return
        url_path = unquote(urlsplit(route.request.url).path)
        path = self.site_dir / url_path.removeprefix(self.mount_path)
        if path.is_file():
            self.local_files.add(path)
        await route.continue_()

    async def summary(self, tab) -> dict:
        """load 이벤트 뒤의 기록. 깨진 그림을 찾느라 모든 그림을 받은 뒤의 전송량을 셉니다."""
        broken = await tab.evaluate(BROKEN_IMAGES_JS)
        overflow = await tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        return {
            "foreign_requests": list(self.foreign_requests),
            "console_errors": list(self.console_errors),
            "broken_images": broken,
            "overflow_px": overflow,
            "gzipped_bytes": sum(gzipped_size(path) for path in self.local_files),
        }


SETTLED_PAGES = [
    "index.html",
    "capstone/01-all-together.html",
    "notebooks/tip4_create_on_device.html",
]


@pytest.mark.parametrize("settled_page", SETTLED_PAGES)
def test_no_request_leaves_the_machine_after_the_page_settles(visit, settled_page):
    """위 테스트는 load 이벤트까지 봅니다. 검색 색인처럼 그 뒤에 스크립트가 보내는 요청도
    127.0.0.1 밖으로 나가지 않는지, 요청이 멎을 때까지 기다려 봅니다(P6)."""
    v = visit("desktop")
    v.open(settled_page, settle=True)
    assert v.foreign_requests == []
    assert v.console_errors == []


def internal_links(html: str) -> list[str]:
    hrefs = re.findall(r'<a\b[^>]*\shref="([^"]+)"', html)
    return [h for h in hrefs if not re.match(r"[a-z]+:|//", h)]


def test_no_broken_links_inside_the_site(built_site):
    broken = []
    for page in site_pages(built_site):
        html = (built_site / page).read_text(encoding="utf-8")
        for href in set(internal_links(html)):
            path_part, _, fragment = href.partition("#")
            target = (built_site / page).parent / unquote(path_part) if path_part else None
            target = target.resolve() if target else built_site / page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page} → {href}")
            elif fragment and target.suffix == ".html":
                if f'id="{fragment}"' not in target.read_text(encoding="utf-8"):
                    broken.append(f"{page} → {href} (앵커 없음)")
    assert broken == []


def test_dark_scheme_is_default_and_the_choice_persists(visit):
    page = visit().open("index.html")
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"
    page.click('label[title="밝은 화면으로 바꾸기"]')
    assert page.get_attribute("body", "data-md-color-scheme") == "default"
    page.goto(page.url.replace("index.html", "tips/01-num-workers.html"))
    assert page.get_attribute("body", "data-md-color-scheme") == "default"
    page.click('label[title="어두운 화면으로 바꾸기"]')
    page.reload()
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"


# 독자가 칠 법한 한국어 검색어와 찾아야 할 페이지. 브라우저 색인은 앞부분 일치만 합니다.
SEARCHES = {
    "워커": "tips/01-num-workers.html",
    "고정된": "tips/02-pin-memory.html",
    "동기화": "tips/03-avoid-syncs.html",
    "난수": "tips/04-create-on-device.html",
    "인터프리터": "tips/05-ddp.html",
    "혼합": "tips/06-16bit.html",
    "프로파일러": "tips/07-profiler.html",
    # 더 나아가기와 전부 합치면: 각 페이지의 한국어 용어(참고 자료의 용어 표)로 찾습니다.
    "컴파일": "beyond/01-torch-compile.html",
    "그래프": "beyond/02-cuda-graphs.html",
    "퓨즈드": "beyond/03-fused-optimizers.html",
    "TF32": "beyond/04-tf32.html",
    "어텐션": "beyond/05-sdpa.html",
    "메모리": "beyond/06-channels-last.html",
    "합성곱": "beyond/07-cudnn-benchmark.html",
    "체크포인팅": "beyond/08-activation-checkpointing.html",
    "변화도": "beyond/09-gradient-accumulation.html",
    "평가": "beyond/10-eval-without-autograd.html",
    "워커를": "beyond/11-dataloader-beyond-workers.html",
    "float8": "beyond/12-float8.html",
    "합치면": "capstone/01-all-together.html",
}


@pytest.fixture(scope="module")
def search_page(browser, site):
    """검색 상자를 연 첫 페이지 하나. 페이지를 열 때마다 브라우저가 검색 색인을 새로 만들어(2초
    남짓) 검색어마다 다시 열지 않고, 이 탭에서 검색어만 바꿉니다."""
    v = Visit(browser, site, "desktop")
    page = v.open("index.html")
    page.click("label.md-search__icon, .md-search__input")
    yield page
    v.close()


def search(page, term: str) -> list[str]:
    """검색 상자에 term을 넣고 결과 링크 주소를 돌려줍니다."""
    box = page.locator("input.md-search__input")
    # 앞 검색어의 결과가 남아 있으면 그것을 읽게 됩니다. 상자를 비워 결과가 모두 사라진 것을 본
    # 뒤에 검색합니다. type()은 한글을 넣어도 검색을 일으키지 않아, fill() 뒤 End 키로 시작합니다.
    box.fill("")
    box.press("End")
    page.wait_for_selector(".md-search-result__item", state="detached")
    box.fill(term)
    box.press("End")
    page.wait_for_selector(".md-search-result__item")
    return page.eval_on_selector_all(
        ".md-search-result__item > a", "links => links.map(a => a.getAttribute('href'))"
    )


@pytest.mark.parametrize(("term", "expected"), SEARCHES.items())
def test_korean_search_finds_the_right_page(search_page, term, expected):
    links = search(search_page, term)
    assert any(urlsplit(link).path.endswith(expected) for link in links), links


def selected_labels(page, label_text):
    """이 이름의 탭을 가진 탭 묶음마다, 지금 선택된 탭의 이름을 돌려줍니다."""
    return page.evaluate(
        """label => [...document.querySelectorAll('.tabbed-set')]
            .filter(set => [...set.querySelectorAll('.tabbed-labels > label')]
                .some(l => l.innerText.trim() === label))
            .map(set => {
                const checked = set.querySelector(':scope > input:checked');
                return set.querySelector(`label[for="${checked.id}"]`).innerText.trim();
            })""",
        label_text,
    )


def test_content_tabs_switch_and_linked_tabs_stay_in_step(visit):
    v = visit()
    page = v.open("tips/04-create-on-device.html")
    assert selected_labels(page, "빠른 코드") == ["느린 코드"]
    page.locator(".tabbed-labels > label", has_text="빠른 코드").first.click()
    assert selected_labels(page, "빠른 코드") == ["빠른 코드"]
    visible = page.locator(".tabbed-block:visible code").first.inner_text()
    assert "rand_on_device" in visible and "rand_then_copy" not in visible
    # 같은 이름의 탭은 사이트 전체에서 함께 바뀝니다(content.tabs.link).
    page.goto(page.url.replace("04-create-on-device", "03-avoid-syncs"))
    assert set(selected_labels(page, "빠른 코드")) == {"빠른 코드"}


def test_pytorch_and_lightning_tabs_switch_together_across_a_page(visit):
    page = visit().open("tips/07-profiler.html")
    before = selected_labels(page, "Lightning")
    assert before and set(before) == {"PyTorch"}
    page.locator(".tabbed-labels > label", has_text="Lightning").first.click()
    assert set(selected_labels(page, "Lightning")) == {"Lightning"}
    page.goto(page.url.replace("tips/07-profiler", "lightning"))
    assert set(selected_labels(page, "Lightning")) == {"Lightning"}


def test_copy_button_copies_exactly_the_code_shown(visit):
    v = visit(permissions=["clipboard-read", "clipboard-write"])
    page = v.open("tips/04-create-on-device.html")
    block = page.locator(".highlight").first
    shown = block.locator("code").inner_text()
    block.hover()
    block.locator('button[data-md-type="copy"]').click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == shown.strip()
    source = (ROOT / "snippets" / "tip4_create_on_device.py").read_text(encoding="utf-8")
    assert copied.strip() == section_lines(source, "article_2020").strip()


@pytest.mark.parametrize("tip_page", ["tips/02-pin-memory.html", "tips/05-ddp.html"])
def test_heading_anchors_are_fixed_english_ids(visit, tip_page):
    page = visit().open(tip_page)
    ids = page.eval_on_selector_all("article h2[id], article h3[id]", "hs => hs.map(h => h.id)")
    assert {"what-the-article-says", "why", "code", "results"} <= set(ids)
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids), ids


def test_not_found_page_is_korean(visit):
    page = visit().open("404.html")
    assert page.inner_text("h1") == "페이지를 찾을 수 없습니다"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """문자열 항목마다 스크립트와 마크업을 심은 결과 파일로 빌드한 사이트를 띄웁니다."""
    from tests.site_build import mkdocs_build
    from tests.test_results_hook import hostile_document, project_with

    tmp_path = tmp_path_factory.mktemp("hostile")
    project = project_with(tmp_path, hostile_document())
    site_dir = tmp_path / "site"
    result = mkdocs_build(project, site_dir)
    assert result.returncode == 0, result.stderr[-2000:]
    handler = functools.partial(QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "hostile_page",
    ["index.html", "results.html", "tips/04-create-on-device.html", "tips/05-ddp.html"],
)
def test_a_hostile_results_file_runs_no_script_in_a_real_browser(
    browser, hostile_site, hostile_page
):
    v = Visit(browser, hostile_site, "desktop")
    dialogs = []
    v.page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        page = v.open(hostile_page)
        assert dialogs == []
        # 심은 글자는 화면에 글자 그대로 보입니다.
        assert '<script>alert("x1")</script>' in page.inner_text("article")
        assert page.eval_on_selector_all("article img[src='x']", "els => els.length") == 0
    finally:
        v.close()
