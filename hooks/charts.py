"""측정 결과 차트를 matplotlib으로 그려 페이지에 바로 넣을 SVG 문자열로 만듭니다.

- 글자는 글자로 남깁니다(`svg.fonttype: none`). 읽는 사람의 브라우저가 한글 글꼴로 그립니다.
- 글자와 축은 `currentColor`로 칠해서 어두운 화면과 밝은 화면 모두에서 본문 색을 따릅니다.
- 같은 입력이면 같은 SVG가 나오도록 날짜를 빼고 id의 소금값(hashsalt)을 고정합니다. 한 페이지에
  차트가 여럿이어도 id가 겹치지 않게 id마다 차트 이름을 앞에 붙입니다.
- 그린 SVG는 입력과 이 파일의 해시로 `.cache/charts/`에 캐시합니다. `mkdocs serve`가 다시 빌드할
  때 matplotlib을 불러오지도 않아 빠릅니다.
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

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "charts"
SOURCE = Path(__file__).read_bytes()  # 이 파일을 고치면 캐시한 차트를 모두 다시 그립니다.

# 본문 색으로 바꿔 칠할 자리표시 색입니다(차트에 다른 용도로 나오지 않는 색).
INK = "#123456"
ROLE_COLORS = {"baseline": "#9e9e9e", "recommended": "#ff7043", "other": "#42a5f5"}
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
    """같은 인자로 그린 적이 있으면 `.cache/charts/`의 SVG를 그대로 씁니다."""

    @functools.wraps(render)
    def render_or_reuse(*args):
        inputs = json.dumps([render.__name__, args], ensure_ascii=False).encode()
        path = CACHE / f"{hashlib.sha256(SOURCE + inputs).hexdigest()}.svg"
        if path.is_file():
            return path.read_text(encoding="utf-8")
        svg = render(*args)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
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


@cached_svg
def relative_speed_chart(name: str, title: str, groups: list[tuple[str, list]]) -> str:
    """그룹마다 가로 막대: 변형별 "기준 대비 속도"(기준 = 1). groups: [(그룹 이름, [(변형, 역할,
    기준 대비 속도)])]."""
    rows = sum(len(bars) for _, bars in groups)
    height = 0.9 + 0.32 * rows + 0.45 * len(groups)

    def draw(figure: Figure) -> None:
        # 모든 그룹이 같은 가로축을 쓰면 그룹끼리 막대 길이를 바로 비교할 수 있습니다.
        axes = figure.subplots(
            len(groups),
            1,
            squeeze=False,
            sharex=True,
            height_ratios=[len(b) + 1 for _, b in groups],
        )
        largest = max(value for _, bars in groups for _, _, value in bars)
        figure.suptitle(title, fontsize=11)
        for ax, (group, bars) in zip(axes[:, 0], groups, strict=True):
            labels = [variant for variant, _, _ in bars]
            values = [value for _, _, value in bars]
            colors = [ROLE_COLORS[role] for _, role, _ in bars]
            positions = range(len(bars))
            ax.barh(positions, values, color=colors, height=0.6)
            ax.set_yticks(positions, labels)
            ax.invert_yaxis()
            ax.axvline(1.0, color=INK, linewidth=0.8, linestyle="--")
            ax.set_title(group, fontsize=10, loc="left")
            ax.set_xlim(0, max(largest, 1.0) * 1.22)
            for position, value in zip(positions, values, strict=True):
                ax.text(value, position, f" {value:.2f}배", va="center", fontsize=9)
        axes[-1, 0].set_xlabel("기준(느린 방식) 대비 속도 — 1보다 크면 빠릅니다")

    description = f"{title}: " + "; ".join(
        f"{group} — " + ", ".join(f"{variant} {value:.2f}배" for variant, _, value in bars)
        for group, bars in groups
    )
    return _quietly_render(draw, name, description, (7.0, height))


@cached_svg
def overview_chart(name: str, tips: list[str], devices: dict[str, dict[str, list]]) -> str:
    """팁마다 장치별 헤드라인 속도 향상을 나란히 그립니다.

    devices: {장치: {팁 이름: [배수, 막대 옆에 쓸 글자]}}. 없는 팁은 "재지 않음"으로 씁니다.
    """
    # 팁마다 이름 한 줄과 장치별 막대를 위아래로 둡니다. 이름을 세로축 눈금에 달면 긴 한국어
    # 이름이 차트 폭을 다 차지해 막대가 그려질 자리가 남지 않습니다.
    label_row, width = 0.7, 0.8  # 이름 한 줄의 높이와 막대 하나의 높이(세로축 단위)
    pitch = label_row + width * max(1, len(devices))
    height = 1.4 + 0.3 * pitch * len(tips)
    palette = ["#ff7043", "#42a5f5", "#66bb6a", "#ab47bc"]

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        for tip_index, tip in enumerate(tips):
            ax.text(0, tip_index * pitch, tip, va="center", ha="left", fontsize=9)
        for index, (device, speedups) in enumerate(devices.items()):
            positions = [t * pitch + label_row + index * width for t in range(len(tips))]
            values = [speedups[tip][0] if tip in speedups else 0.0 for tip in tips]
            color = palette[index % len(palette)]
            ax.barh(positions, values, height=width * 0.85, color=color, label=device)
            for position, tip, value in zip(positions, tips, values, strict=True):
                text = speedups[tip][1] if tip in speedups else "재지 않음"
                ax.text(value, position, f" {text}", va="center", fontsize=9)
        ax.set_yticks([])
        ax.set_ylim(len(tips) * pitch - 0.2, -0.5)
        ax.axvline(1.0, color=INK, linewidth=0.8, linestyle="--")
        largest = max((v[0] for s in devices.values() for v in s.values()), default=1.0)
        ax.set_xlim(0, max(largest, 1.0) * 1.3)
        ax.set_xlabel("느린 방식 대비 빠른 방식의 속도(배)")
        # 범례는 그림 위 바깥에 둡니다. 안에 두면 긴 막대의 숫자를 가립니다.
        figure.legend(loc="outside upper center", ncols=len(devices), frameon=False)

    description = "팁별 속도 향상: " + "; ".join(
        f"{device} — " + ", ".join(f"{tip} {label}" for tip, (_, label) in speedups.items())
        for device, speedups in devices.items()
    )
    return _quietly_render(draw, name, description, (7.0, height))


@cached_svg
def waterfall_chart(name: str, title: str, stages: list[tuple[str, float, float | None]]) -> str:
    """단계마다 가로 막대 하나: 초당 토큰 수(위에서 아래로 단계 순서). stages: [(단계 이름,
    토큰/초, MFU(%) 또는 None)]. 앞 단계보다 늘어난 부분은 초록, 줄어든 부분은 빨강으로 칠해
    어느 단계가 얼마나 보탰는지(폭포 차트) 보이고, 막대 옆에 기준 대비 배수와 MFU를 씁니다."""
    gain, loss, kept = "#66bb6a", "#ef5350", "#42a5f5"
    height = 1.2 + 0.36 * len(stages)

    def number(value: float) -> str:
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        values = [value for _, value, _ in stages]
        base = values[0] if values and values[0] > 0 else None
        largest = max(values, default=1.0) or 1.0
        for position, (_, value, mfu) in enumerate(stages):
            previous = values[position - 1] if position else None
            if previous is None:
                ax.barh(position, value, color=ROLE_COLORS["baseline"], height=0.6)
            else:
                ax.barh(position, min(value, previous), color=kept, height=0.6)
                if value > previous:
                    ax.barh(position, value - previous, left=previous, color=gain, height=0.6)
                elif value < previous:
                    ax.barh(
                        position, previous - value, left=value, color=loss, alpha=0.45, height=0.6
                    )
            text = f" {number(value)}"
            if base:
                text += f" · {value / base:.2f}배"
            if mfu is not None:
                text += f" · MFU {mfu:.0f}%" if mfu >= 1 else f" · MFU {mfu:.2g}%"
            ax.text(max(value, previous or 0.0), position, text, va="center", fontsize=9)
        ax.set_yticks(range(len(stages)), [label for label, _, _ in stages])
        ax.invert_yaxis()
        ax.set_xlim(0, largest * 1.55)
        ax.set_xlabel("초당 토큰 수 — 초록: 앞 단계보다 빨라진 만큼, 빨강: 느려진 만큼")
        figure.suptitle(title, fontsize=11)

    description = f"{title}: " + ", ".join(
        f"{label} {number(value)} 토큰/초" + (f"(MFU {mfu:.2g}%)" if mfu is not None else "")
        for label, value, mfu in stages
    )
    return _quietly_render(draw, name, description, (7.5, height))
