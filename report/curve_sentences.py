"""스윕과 손익분기의 문장: 어디서 판정이 바뀌는지, 몇 스텝부터 본전인지.

숫자는 benchmarks/curves.py가 계산하고, 여기서는 한국어 문장 하나로 씁니다.
"""

from __future__ import annotations

from guide import registry
from report import curves
from report.analysis import VERDICTS
from report.formatting import format_number, format_seconds


def sweep_sentence(spec: registry.Sweep, points: list[curves.Point]) -> str:
    """스윕 하나의 결론: 어디서 구간이 1을 넘는지(교차점)."""
    cross = curves.crossover(points)
    # 교차점의 low_x–high_x는 판정이 바뀌는 두 점 사이이고, 재 본 범위는 모든 점의 처음과 끝입니다.
    xs = sorted(point.x for point in points)
    span = f"재 본 범위 {format_number(xs[0])}–{format_number(xs[-1])}"
    word = VERDICTS[cross.verdict]
    axis = spec.x_label
    if cross.kind == "all":
        return f"{span} 전체에서 {word}: 이 장치에서는 교차점이 없습니다."
    if cross.kind == "none":
        return f"{span}에서는 어느 크기에서도 구간이 ±5%를 벗어나지 않아 교차점이 없습니다."
    if cross.kind == "mixed":
        parts = [f"{_where(low, high)}에서는 {MIDDLE[verdict]}" for verdict, low, high in
                 curves.runs(points)]  # fmt: skip
        last = parts[-1].removesuffix(MIDDLE[cross.verdict]) + FINAL[cross.verdict]
        listing = ", ".join([*parts[:-1], last])
        return f"이 장치에서는 판정이 크기를 따라 오르내립니다: {axis} {listing}({span})."
    low, high = format_number(cross.low_x), format_number(cross.high_x)
    if cross.kind == "from":
        where = f"{axis} ≈ {format_number(cross.x)}" if cross.x else axis
        verb = "빨라집니다" if cross.verdict == "faster" else "느려집니다"
        return f"이 장치에서는 {where}부터 {verb}({low}–{high} 사이에서 바뀝니다, {span})."
    verb = "빨라지고" if cross.verdict == "faster" else "느려지고"
    return f"이 장치에서는 {axis} {low}까지는 {verb}, {high}부터는 차이가 없습니다({span})."


MIDDLE = {"faster": "빨라지고", "slower": "느려지고", "same": "차이가 없고"}
FINAL = {"faster": "빨라집니다", "slower": "느려집니다", "same": "차이가 없습니다"}


def _where(low: float, high: float) -> str:
    return format_number(low) if low == high else f"{format_number(low)}–{format_number(high)}"


def break_even_sentence(result: curves.BreakEvenResult) -> str:
    spec = result.spec
    cost = f"한 번 드는 비용 {format_seconds(result.cost_s)}"
    if result.steps is None:
        return (
            f"{spec.label}: {cost}. {spec.unit} 시간이 구간 안에서 줄지 않아 본전을 찾지 못합니다."
        )
    saving = format_seconds(result.saving_s)
    steps = format_number(max(1.0, result.steps))
    unit = spec.unit
    return f"{spec.label}: {cost}, {unit}마다 {saving} 절약 → 약 {steps}{unit}부터 본전입니다."
