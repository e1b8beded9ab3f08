"""숫자와 이름을 사람이 읽는 글자로: 시간 단위, 큰 수의 쉼표, 배수, 구간의 자릿수, 조사.

표, 결론 문장, 차트, 요약 명령이 모두 이 함수로 써서 같은 숫자가 어디서나 같은 글자가 됩니다.
"""

from __future__ import annotations


def format_seconds(seconds: float) -> str:
    """사람이 읽기 좋은 시간 단위(유효숫자 세 자리)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_number(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


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


def josa(word: str, pair: str) -> str:
    """한글로 끝나는 낱말 뒤의 조사: josa("메모리", "은/는") == "메모리는"."""
    last = word.rstrip()[-1]
    if not "가" <= last <= "힣":
        raise ValueError(
            f"한글로 끝나지 않는 낱말에는 받침에 따른 조사를 붙이지 않습니다: {word!r}"
        )
    final = (ord(last) - ord("가")) % 28
    with_final, without = pair.split("/")
    if pair == "으로/로":
        return word + ("로" if final in (0, 8) else "으로")
    return word + (with_final if final else without)


def quoted(label: str) -> str:
    return f"‘{label}’"
