"""측정 결과 차트를 matplotlib으로 그려 SVG 문자열로 만듭니다. 스타일과 SVG 마무리, 캐시는
chart_svg.py에, 페이지에 넣는 일은 chart_images.py에 있습니다.

막대와 선은 구간(95%)을 함께 그립니다. 색은 네 가지 판정입니다: 빨라짐은 강조색, 느려짐은 빨강,
차이 없음(구간이 0.95–1.05 안)은 회색, 판정 보류(구간이 띠의 경계에 걸침)는 옅은 회색입니다.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hooks.chart_svg import INK, cached_svg, render_svg
from torchdoctor.words import WORDS, format_ratio

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROLE_COLORS = {"baseline": "#9e9e9e", "recommended": "#e64a19", "other": "#1e88e5"}
# 구간으로 내린 판정의 색: 빨라짐은 본문의 강조색, 느려짐은 빨강, 차이 없음은 회색, 판정 보류는
# 옅은 회색. 색만으로 읽지 않도록 막대 옆 글자에도 판정을 씁니다.
VERDICT_COLORS = {"faster": "#e64a19", "slower": "#c62828", "same": "#9e9e9e",
                  "inconclusive": "#cfcfcf", None: "#9e9e9e"}  # fmt: skip
VERDICT_LEGEND = "회색: 차이 없음, 옅은 회색: 판정 보류"
BAND = (0.95, 1.05)


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
            f"기준 대비 속도(배, 선은 95% 구간) — 1보다 크면 빠릅니다. {VERDICT_LEGEND}"
        )

    description = f"{title}: " + "; ".join(
        f"{group} — "
        + ", ".join(
            f"{label} {format_ratio(median)}({low:.3g}–{high:.3g})"
            for label, _, median, low, high, _ in bars
        )
        for group, bars in groups
    )
    return render_svg(draw, name, description, (7.0, height))


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
            ax.text(0.01, index * pitch, label, va="center", ha="left", fontsize=9,
                    transform=ax.get_yaxis_transform())  # fmt: skip
        for index, bars in enumerate(devices.values()):
            for row, label in enumerate(labels):
                position = row * pitch + label_row + index * width
                if label not in bars:
                    ax.text(0.01, position, " 재지 않음 · 해당 없음", va="center", fontsize=9,
                            transform=ax.get_yaxis_transform())  # fmt: skip
                    continue
                median, low, high, verdict, text = bars[label]
                _interval_bar(ax, position, median, low, high, VERDICT_COLORS[verdict])
                # 장치가 여럿이면 색이 아니라 모양으로 장치를 가립니다(색은 판정에 씁니다).
                ax.plot(0.005, position, markers[index % len(markers)], color=INK, markersize=4,
                        transform=ax.get_yaxis_transform())  # fmt: skip
                ax.text(high, position, f"  {text}", va="center", fontsize=9)
        ax.set_yticks([])
        ax.set_ylim(len(labels) * pitch - 0.2, -0.5)
        _band(ax)
        # 로그 축: CPU에서만 큰 배수(심어 둔 병목 등)가 축을 정해 GPU에서 중요한 작은 배수가
        # 보이지 않게 되는 것을 막습니다. 0.5배와 2배가 1에서 같은 거리입니다.
        values = [v for bars in devices.values() for b in bars.values() for v in b[1:3]]
        ax.set_xscale("log")
        ax.set_xlim(
            min(min(values, default=1.0), 0.9) / 1.3, max(max(values, default=1.0), 1.1) * 4
        )
        ax.set_xlabel(f"기준 대비 속도(배, 로그 눈금, 선은 95% 구간). {VERDICT_LEGEND}")
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
    return render_svg(draw, name, description, (7.0, height))


@cached_svg
def waterfall_chart(name: str, title: str, stages: list[tuple]) -> str:
    """단계마다 가로 막대 하나: 초당 토큰 수(위에서 아래로 단계 순서).

    stages: [(단계 이름, 토큰/초, 천장 대비(%) 또는 None, 앞 단계 대비 판정 또는 None,
    이 장치에 메커니즘이 없는지, 기준 대비 짝 비율의 중앙값 또는 None)]. 막대 옆 배수는 표의 누적
    배수와 같은 값(짝 비율의 중앙값)이고, 색과 판정은 앞 단계 대비입니다.
    """
    height = 1.2 + 0.36 * len(stages)

    def number(value: float) -> str:
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"

    def draw(figure: Figure) -> None:
        ax = figure.subplots()
        values = [value for _, value, *_ in stages]
        largest = max(values, default=1.0) or 1.0
        for position, (_, value, percent, verdict, no_mechanism, ratio) in enumerate(stages):
            color = ROLE_COLORS["baseline"] if position == 0 else VERDICT_COLORS[verdict]
            ax.barh(position, value, color=color, height=0.6)
            text = f" {number(value)}"
            if ratio is not None:
                text += f" · 기준의 {format_ratio(ratio)}"
            if no_mechanism:
                text += " · 이 장치에서는 바뀌는 것 없음"
            elif position and verdict:
                text += f" · 앞 단계보다 {WORDS[verdict]}"
            if percent is not None:
                text += f" · 천장 {percent:.0f}%"
            ax.text(value, position, text, va="center", fontsize=9)
        ax.set_yticks(range(len(stages)), [label for label, *_ in stages])
        ax.invert_yaxis()
        ax.set_xlim(0, largest * 1.7)
        ax.set_xlabel(f"초당 토큰 수 — 강조색: 앞 단계보다 빨라짐, 빨강: 느려짐, {VERDICT_LEGEND}")
        figure.suptitle(title, fontsize=11)

    description = f"{title}: " + ", ".join(
        f"{label} {number(value)} 토큰/초" for label, value, *_ in stages
    )
    return render_svg(draw, name, description, (7.5, height))


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
    return render_svg(draw, name, description, (7.0, 3.6))
