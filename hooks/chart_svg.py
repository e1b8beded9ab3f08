"""차트 그리기의 공통 부분: matplotlib 스타일, SVG 마무리, 한글 글꼴, 사용자 캐시(hooks/cache.py).

- 글자는 글자로 남깁니다(`svg.fonttype: none`). 읽는 사람의 브라우저가 한글 글꼴로 그립니다.
- 글자와 축은 `currentColor`로 칠해 두고, 파일로 쓸 때 화면 모드마다 본문 글자색으로 바꿉니다.
- 같은 입력이면 같은 SVG가 나오도록 날짜를 빼고 id의 소금값(hashsalt)을 고정합니다. 한 페이지에
  차트가 여럿이어도 id가 겹치지 않게 id마다 차트 이름을 앞에 붙입니다.
- 그린 SVG는 입력과 그리는 코드(이 파일과 charts.py)의 해시로 사용자 캐시 폴더(저장소 밖)에
  캐시합니다. `mkdocs serve`가 다시 빌드할 때 matplotlib을 불러오지도 않아 빠릅니다. 저장소 안에
  두지 않는 까닭: git이 나르는 파일이 캐시로 읽혀 페이지에 그대로 들어가면 안 되기 때문입니다.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import re
import warnings
from pathlib import Path
from xml.sax.saxutils import escape

from hooks import cache

CACHE = cache.folder("charts")
# 그리는 코드를 고치면 캐시한 차트를 모두 다시 그립니다.
SOURCE = b"".join(
    (Path(__file__).parent / name).read_bytes() for name in ("chart_svg.py", "charts.py")
)

# 본문 색으로 바꿔 칠할 자리표시 색입니다(차트에 다른 용도로 나오지 않는 색).
INK = "#123456"
FONT_FAMILY = ["NanumGothic", "Noto Sans CJK KR", "Malgun Gothic", "Apple SD Gothic Neo"]
STYLE = {
    "svg.fonttype": "none",
    # 이름은 결과 파일(바깥 데이터)에서도 옵니다. `$…$`를 수식으로 읽으면 그리기가 멈출 수 있습니다.
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": [*FONT_FAMILY, "DejaVu Sans"],
    "font.size": 10,
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.edgecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def cached_svg(render):
    """같은 인자로 그린 적이 있으면 사용자 캐시 폴더(hooks/cache.py)의 SVG를 그대로 씁니다."""

    @functools.wraps(render)
    def render_or_reuse(*args):
        inputs = json.dumps([render.__name__, args], ensure_ascii=False).encode()
        path = CACHE / f"{hashlib.sha256(SOURCE + inputs).hexdigest()}.svg"
        cached = cache.read(path)
        if cached is not None:
            return cached
        svg = render(*args)
        cache.write(path, svg)
        return svg

    return render_or_reuse


def _finish(figure, name: str, description: str) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", transparent=True, metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # XML 선언과 DOCTYPE은 HTML 안에서 필요 없습니다.
    svg = svg.replace(INK, "currentColor")
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.DOTALL)
    # matplotlib은 모든 요소에 id를 붙입니다. 참조되는 id(잘라내기 경로 등)만 남겨 크기를 줄입니다.
    used = set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg))
    svg = re.sub(r'\s+id="([^"]+)"', lambda m: m.group(0) if m.group(1) in used else "", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', svg)
    svg = re.sub(r"\n\s*\n", "\n", svg)  # 빈 줄이 있으면 Markdown이 HTML 블록을 끊습니다.
    label = f'role="img" aria-label="{escape(description, {chr(34): "&quot;"})}"'
    return svg.replace("<svg ", f"<svg {label} ", 1)


@functools.cache
def _register_korean_fonts() -> None:
    """matplotlib은 처음 실행할 때 글꼴 목록을 캐시하고, 그 뒤에 설치한 글꼴은 모릅니다. 한글 글꼴을
    모르면 한글 글자 폭을 좁게 재서 축 이름이 차트 왼쪽 밖으로 잘립니다. 그럴 때 시스템의 한글
    글꼴을 직접 등록합니다."""
    from matplotlib import font_manager

    if {font.name for font in font_manager.fontManager.ttflist} & set(FONT_FAMILY):
        return
    for path in font_manager.findSystemFonts():
        if Path(path).name.startswith(("NanumGothic", "NotoSansCJK")):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue  # 읽지 못하는 글꼴 파일은 건너뜁니다.


def render_svg(draw, name: str, description: str, size: tuple[float, float]) -> str:
    # 한글 글꼴이 없는 빌드 컴퓨터에서는 글자 폭을 잴 때 경고가 나오지만, SVG의 글자는
    # 브라우저가 그리므로 문제가 없습니다. 그 경고로 빌드 로그를 채우지 않습니다.
    # matplotlib은 캐시에 없는 차트를 그릴 때만 불러옵니다(불러오는 데만 1초쯤 걸립니다).
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    _register_korean_fonts()
    font_logger = logging.getLogger("matplotlib.font_manager")
    level = font_logger.level
    font_logger.setLevel(logging.ERROR)
    try:
        with rc_context(STYLE | {"svg.hashsalt": name}):
            figure = Figure(figsize=size, layout="constrained")
            draw(figure)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return _finish(figure, name, description)
    finally:
        font_logger.setLevel(level)
