"""측정 결과 차트를 matplotlib으로 그려 SVG 문자열로 만듭니다(페이지에 넣는 일은 chart_images.py).

- 글자는 글자로 남깁니다(`svg.fonttype: none`). 읽는 사람의 브라우저가 한글 글꼴로 그립니다.
- 글자와 축은 `currentColor`로 칠해 두고, 파일로 쓸 때 화면 모드마다 본문 글자색으로 바꿉니다.
- 같은 입력이면 같은 SVG가 나오도록 날짜를 빼고 id의 소금값(hashsalt)을 고정합니다. 한 페이지에
  차트가 여럿이어도 id가 겹치지 않게 id마다 차트 이름을 앞에 붙입니다.
- 그린 SVG는 입력과 이 파일의 해시로 사용자 캐시 폴더(저장소 밖, hooks/cache.py)에 캐시합니다.
  `mkdocs serve`가 다시 빌드할 때 matplotlib을 불러오지도 않아 빠릅니다. 저장소 안에 두지 않는
  까닭: git이 나르는 파일이 캐시로 읽혀 페이지에 그대로 들어가면 안 되기 때문입니다.
- 막대와 선은 구간(95%)을 함께 그립니다. 구간이 "차이 없음"(0.95–1.05)에 걸치면 회색입니다.
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
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from benchmarks.formatting import format_ratio
from hooks import cache

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CACHE = cache.folder("charts")
SOURCE = Path(__file__).read_bytes()  # 이 파일을 고치면 캐시한 차트를 모두 다시 그립니다.

# 본문 색으로 바꿔 칠할 자리표시 색입니다(차트에 다른 용도로 나오지 않는 색).
INK = "#123456"
ROLE_COLORS = {"baseline": "#9e9e9e", "recommended": "#e64a19", "other": "#1e88e5"}
# 구간으로 내린 판정의 색: 빨라짐은 본문의 강조색, 느려짐은 빨강, 차이 없음은 회색.
VERDICT_COLORS = {"faster": "#e64a19", "slower": "#c62828", "same": "#9e9e9e", None: "#9e9e9e"}
BAND = (0.95, 1.05)
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


def _quietly_render(draw, name: str, description: str, size: tuple[float, float]) -> str:
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


def _interval_bar(ax, position, median, low, high, color):
    ax.barh(position, median, color=color, height=0.6)
    ax.errorbar(median, position, xerr=[[median - low], [high - median]], fmt="none",
                ecolor=INK, elinewidth=1, capsize=3)  # fmt: skip


def _band(ax):
    """ "차이 없음"의 범위(0.95–1.05)를 옅게 칠하고 1에 점선을 긋습니다."""
    ax.axvspan(*BAND, color=INK, alpha=0.08, linewidth=0)
    ax.axvline(1.0, color=INK, linewidth=0.8, linestyle="--")


@cached_svg
def relative_speed_chart(name: str, title: str, groups: list[tuple[str, list]]) -> str:
    """묶음마다 가로 막대: 변형별 "기준 대비 속도"(기준 = 1)와 95% 구간.

    groups: [(묶음 이름, [(변형, 역할, 중앙값, 아래, 위, 판정)])].
    """
    rows = sum(len(bars) for _, bars in groups)
    height = 1.0 + 0.34 * rows + 0.45 * len(groups)

    def draw(figure: Figure) -> None:
        axes = figure.subplots(len(groups), 1, squeeze=False, sharex=True,
                               height_ratios=[len(b) + 1 for _, b in groups])  # fmt: skip
        largest = max(high for _, bars in groups for *_, high, _ in bars)
        figure.suptitle(title, fontsize=11)
        for ax, (group, bars) in zip(axes[:, 0], groups, strict=True):
            positions = range(len(bars))
            for position, (_, role, median, low, high, verdict) in zip(
                positions, bars, strict=True
            ):
                color = ROLE_COLORS["baseline"] if role == "baseline" else VERDICT_COLORS[verdict]
                _interval_bar(ax, position, median, low, high, color)
                text = "기준" if role == "baseline" else format_ratio(median)
                ax.text(high, position, f"  {text}", va="center", fontsize=9)
            ax.set_yticks(list(positions), [label for label, *_ in bars])
            ax.invert_yaxis()
            _band(ax)
            ax.set_title(group, fontsize=10, loc="left")
            ax.set_xlim(0, max(largest, 1.0) * 1.25)
        axes[-1, 0].set_xlabel(
            "기준 대비 속도(배, 선은 95% 구간) — 1보다 크면 빠릅니다. 회색: 차이 없음"
        )

    description = f"{title}: " + "; ".join(
        f"{group} — "
        + ", ".join(
            f"{label} {format_ratio(median)}({low:.3g}–{high:.3g})"
            for label, _, median, low, high, _ in bars
        )
        for group, bars in groups
    )
    return _quietly_render(draw, name, description, (7.0, height))


@cached_svg
def overview_chart(name: str, labels: list[str], devices: dict[str, dict[str, list]]) -> str:
    """페이지마다 장치별 대표 결과: 중앙값 막대와 95% 구간.

    devices: {장치: {이름: [중앙값, 아래, 위, 판정, 막대 옆 글자]}}. 없는 이름은 "재지 않음".
    """
    # 이름 한 줄과 장치별 막대를 위아래로 둡니다. 이름을 세로축 눈금에 달면 긴 한국어 이름이 차트
    # 폭을 다 차지합니다.
    label_row, width = 0.7, 0.8
    pitch = label_row + width * max(1, len(devices))
    height = 1.4 + 0.3 * pitch * len(labels)
    markers = ["o", "s", "D", "^", "v", "P", "X", "*"]

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        for index, label in enumerate(labels):
            ax.text(0, index * pitch, label, va="center", ha="left", fontsize=9)
        for index, bars in enumerate(devices.values()):
            for row, label in enumerate(labels):
                position = row * pitch + label_row + index * width
                if label not in bars:
                    ax.text(0, position, " 재지 않음 · 해당 없음", va="center", fontsize=9)
                    continue
                median, low, high, verdict, text = bars[label]
                _interval_bar(ax, position, median, low, high, VERDICT_COLORS[verdict])
                # 장치가 여럿이면 색이 아니라 모양으로 장치를 가립니다(색은 판정에 씁니다).
                ax.plot(0.02, position, markers[index % len(markers)], color=INK, markersize=4)
                ax.text(high, position, f"  {text}", va="center", fontsize=9)
        ax.set_yticks([])
        ax.set_ylim(len(labels) * pitch - 0.2, -0.5)
        _band(ax)
        largest = max((b[2] for bars in devices.values() for b in bars.values()), default=1.0)
        ax.set_xlim(0, max(largest, 1.0) * 1.35)
        ax.set_xlabel("기준 대비 속도(배, 선은 95% 구간). 회색: 차이 없음")
        handles = [
            ax.plot([], [], markers[i % len(markers)], color=INK, label=device)[0]
            for i, device in enumerate(devices)
        ]
        figure.legend(handles=handles, loc="outside upper center", ncols=min(len(devices), 2),
                      frameon=False)  # fmt: skip

    description = "페이지별 대표 결과: " + "; ".join(
        f"{device} — " + ", ".join(f"{label} {bar[4]}" for label, bar in bars.items())
        for device, bars in devices.items()
    )
    return _quietly_render(draw, name, description, (7.0, height))


@cached_svg
def waterfall_chart(name: str, title: str, stages: list[tuple]) -> str:
    """단계마다 가로 막대 하나: 초당 토큰 수(위에서 아래로 단계 순서).

    stages: [(단계 이름, 토큰/초, 천장 대비(%) 또는 None, 앞 단계 대비 판정 또는 None,
    이 장치에 메커니즘이 없는지)]. 앞 단계보다 구간 전체가 빨라진 단계만 강조색, 느려진 단계만
    빨강으로 칠하고 나머지(차이 없음, 메커니즘 없음)는 회색입니다.
    """
    height = 1.2 + 0.36 * len(stages)

    def number(value: float) -> str:
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        values = [value for _, value, *_ in stages]
        base = values[0] if values and values[0] > 0 else None
        largest = max(values, default=1.0) or 1.0
        for position, (_, value, percent, verdict, no_mechanism) in enumerate(stages):
            color = ROLE_COLORS["baseline"] if position == 0 else VERDICT_COLORS[verdict]
            ax.barh(position, value, color=color, height=0.6)
            text = f" {number(value)}"
            if base:
                text += f" · 기준의 {format_ratio(value / base)}"
            if no_mechanism:
                text += " · 이 장치에서는 바뀌는 것 없음"
            elif position and verdict:
                text += {"faster": " · 빨라짐", "slower": " · 느려짐", "same": " · 차이 없음"}[
                    verdict
                ]
            if percent is not None:
                text += f" · 천장 {percent:.0f}%"
            ax.text(value, position, text, va="center", fontsize=9)
        ax.set_yticks(range(len(stages)), [label for label, *_ in stages])
        ax.invert_yaxis()
        ax.set_xlim(0, largest * 1.6)
        ax.set_xlabel("초당 토큰 수 — 강조색: 앞 단계보다 빨라짐, 빨강: 느려짐, 회색: 차이 없음")
        figure.suptitle(title, fontsize=11)

    description = f"{title}: " + ", ".join(
        f"{label} {number(value)} 토큰/초" for label, value, *_ in stages
    )
    return _quietly_render(draw, name, description, (7.5, height))


@cached_svg
def sweep_chart(
    name: str, title: str, x_label: str, points: list[tuple], crossing, sentence: str
) -> str:
    """크기(로그 축)에 따른 기준 대비 속도와 95% 구간의 띠. crossing: 교차점의 x(없으면 None)."""

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        xs = [x for x, *_ in points]
        ax.fill_between(xs, [low for _, _, low, _ in points], [high for *_, high in points],
                        color=VERDICT_COLORS["faster"], alpha=0.25, linewidth=0)  # fmt: skip
        ax.plot(xs, [median for _, median, _, _ in points], "o-", color=VERDICT_COLORS["faster"])
        ax.axhspan(*BAND, color=INK, alpha=0.08, linewidth=0)
        ax.axhline(1.0, color=INK, linewidth=0.8, linestyle="--")
        if crossing:
            ax.axvline(crossing, color=INK, linewidth=0.8, linestyle=":")
            ax.text(crossing, ax.get_ylim()[1], f" ≈ {crossing:,.0f}", va="top", fontsize=9)
        ax.set_xscale("log")
        ax.set_xticks(xs, [f"{x:,.0f}" if x >= 1 else f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_xlabel(x_label)
        ax.set_ylabel("기준 대비 속도(배)")
        figure.suptitle(title, fontsize=11)

    description = f"{title}: {sentence} " + ", ".join(
        f"{x:g}에서 {format_ratio(median)}({low:.3g}–{high:.3g})" for x, median, low, high in points
    )
    return _quietly_render(draw, name, description, (7.0, 3.6))
