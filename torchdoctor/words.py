"""판정과 잰 비율을 한국어로: 사이트의 표·결론과 torchdoctor의 보고서가 같은 글자를 씁니다.

예: "1.43배 (1.38–1.49, 빨라짐)", "0.50배 (0.48–0.52, 느려짐)", "차이 없음 (0.98–1.03배)",
"판정 보류: 0.81–0.96배, 느린 쪽", "판정 보류: 0.97–1.08배".
"""

from __future__ import annotations

from torchdoctor.stats import CONFIDENCE, Interval

WORDS = {"faster": "빨라짐", "slower": "느려짐", "same": "차이 없음", "inconclusive": "판정 보류"}
SIDES = {"faster": "빠른 쪽", "slower": "느린 쪽"}


def format_seconds(seconds: float) -> str:
    """사람이 읽기 좋은 시간 단위(유효숫자 세 자리)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_ratio(value: float) -> str:
    """배수 하나: 1.43배, 21.6배, 0.012배, 12,345배(유효숫자를 잃지 않게 크기마다 씁니다)."""
    # 자리수는 반올림한 값으로 고릅니다: 999.96은 "1000.0배"가 아니라 "1,000배"입니다.
    if round(value, 1) >= 1000:
        return f"{value:,.0f}배"
    if round(value, 2) >= 10:
        return f"{value:.1f}배"
    return f"{value:.2f}배" if value >= 0.1 else f"{value:.2g}배"


def interval_bounds(low: float, high: float) -> str:
    # 작은 구간을 소수점 두 자리로 쓰면 0.025–0.027이 "0.03–0.03"으로 뭉개집니다: 유효 숫자 두 자리.
    if low >= 1000:
        return f"{low:,.0f}–{high:,.0f}"
    if low < 0.1:
        return f"{low:.2g}–{high:.2g}"
    digits = 1 if low >= 10 else 2
    return f"{low:,.{digits}f}–{high:,.{digits}f}"  # 윗끝만 1,000을 넘어도 쉼표를 씁니다


def level_of(interval: Interval) -> str:
    """구간의 신뢰 수준: 보통 "95%", 라운드가 적으면 실제로 보장하는 값("75%")."""
    return f"{min(interval.confidence, CONFIDENCE):.0%}"


def confidence_note(interval: Interval) -> str:
    """라운드가 적어 95%에 못 미치는 구간이면 그 까닭과 신뢰 수준을 밝힙니다."""
    if interval.confidence >= CONFIDENCE:
        return ""
    return f", 라운드가 적어 신뢰 수준 {level_of(interval)}"


def ratio_text(interval: Interval) -> str:
    """잰 비율 하나를 판정과 함께: 표의 칸, 결론 문장, 요약, 진단 보고서가 모두 이 글자입니다."""
    bounds = interval_bounds(interval.low, interval.high)
    note = confidence_note(interval)
    kind = interval.verdict
    if kind == "same":
        return f"{WORDS['same']} ({bounds}배{note})"
    if kind == "inconclusive":
        leaning = f", {SIDES[interval.side]}" if interval.side else ""
        return f"{WORDS['inconclusive']}: {bounds}배{leaning}{note}"
    return f"{format_ratio(interval.median)} ({bounds}, {WORDS[kind]}{note})"


def cumulative_text(interval: Interval) -> str:
    """판정 없이 배수와 구간만: 전부 합치면의 누적 배수(판정은 단계마다 앞 단계와 견줘 내립니다)."""
    bounds = interval_bounds(interval.low, interval.high)
    return f"{format_ratio(interval.median)} ({bounds}{confidence_note(interval)})"
