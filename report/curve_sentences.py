"""스윕과 손익분기의 문장: 어디서 판정이 바뀌는지, 몇 스텝부터 본전인지.

숫자는 report/curves.py가 계산하고, 여기서는 한국어 문장 하나로 씁니다.
"""

from __future__ import annotations

import math

from guide import registry
from report import analysis, curves
from report.formatting import format_number
from torchdoctor.words import format_seconds


def sweep_sentence(
    spec: registry.Sweep, points: list[curves.Point], cross: curves.Crossover | None = None
) -> str:
    """스윕 하나의 결론: 어디서 구간이 1을 넘는지(교차점). 이미 계산한 교차점이 있으면 받습니다."""
    cross = cross or curves.crossover(points)
    # 교차점의 low_x–high_x는 판정이 바뀌는 두 점 사이이고, 재 본 범위는 모든 점의 처음과 끝입니다.
    xs = sorted(point.x for point in points)
    span = f"재 본 범위 {format_number(xs[0])}–{format_number(xs[-1])}"
    word = analysis.VERDICTS[cross.verdict]
    axis = spec.x_label
    if cross.kind == "all":
        return f"{span} 전체에서 {word}: 이 장치에서는 교차점이 없습니다."
    if cross.kind == "none":
        return f"{span}에서는 어느 크기에서도 구간 전체가 ±5% 밖으로 나가지 않아 교차점이 없습니다."
    if cross.kind == "mixed":
        parts = [f"{_where(low, high)}에서는 {MIDDLE[verdict]}" for verdict, low, high in
                 curves.runs(points)]  # fmt: skip
        last = parts[-1].removesuffix(MIDDLE[cross.verdict]) + FINAL[cross.verdict]
        listing = ", ".join([*parts[:-1], last])
        return f"이 장치에서는 판정이 크기를 따라 오르내립니다: {axis} {listing}({span})."
    low, high = format_number(cross.low_x), format_number(cross.high_x)
    # 교차점은 잰 두 점 사이로만 말합니다: 사이의 값(보간)은 잰 것이 아니라서 거짓 정밀도가 됩니다.
    if cross.kind == "from":
        return (
            f"이 장치에서는 {axis} {low}–{high} 사이에서 판정이 바뀌어 {high}부터 "
            f"{FINAL[cross.verdict]}({span})."
        )
    later = FINAL[
        max(points, key=lambda p: p.x).ratio.verdict
    ]  # 큰 쪽 끝: 차이 없음 또는 판정 보류
    return (
        f"이 장치에서는 {axis} {low}까지는 {MIDDLE[cross.verdict]}, {high}부터는 {later}({span})."
    )


MIDDLE = {
    "faster": "빨라지고",
    "slower": "느려지고",
    "same": "차이가 없고",
    "inconclusive": "판정을 보류하고",
}
FINAL = {"faster": "빨라집니다", "slower": "느려집니다", "same": "차이가 없습니다",
         "inconclusive": "판정을 보류합니다"}  # fmt: skip


def _where(low: float, high: float) -> str:
    return format_number(low) if low == high else f"{format_number(low)}–{format_number(high)}"


def break_even_sentence(result: analysis.BreakEvenResult) -> str:
    spec = result.spec
    cost = f"한 번 드는 비용 {format_seconds(result.cost_s)}"
    if result.steps is None:
        return (
            f"{spec.label}: {cost}. {spec.unit} 시간이 구간 안에서 줄지 않아 본전을 찾지 못합니다."
        )
    saving = format_seconds(result.saving_s)
    # 본전은 셀 수 있는 단위로 말합니다("7.13배치"가 아니라 8배치째).
    steps = format_number(max(1, math.ceil(result.steps)))
    unit = spec.unit
    return f"{spec.label}: {cost}, {unit}마다 {saving} 절약 → {steps}{unit}째부터 본전입니다."
