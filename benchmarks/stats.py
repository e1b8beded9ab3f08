"""짝지은 비율의 구간과 판정: 같은 라운드에서 잰 기준과 변형의 시간으로 낸 비율을 다룹니다.

라운드마다 모든 변형을 한 번씩 섞인 순서로 재므로(benchmarks/interleave.py), 라운드 i의
비율 r_i = (기준 시간/일) ÷ (변형 시간/일)은 그 라운드의 기계 상태를 양쪽이 함께 겪은 값입니다.
중앙값의 95% 신뢰구간은 순서 통계량으로 냅니다(부호 검정을 뒤집은, 분포를 가정하지 않는 정확한
방법). 설명과 근거는 docs/method.md의 "구간" 절에 있습니다.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

CONFIDENCE = 0.95
# 이 범위 안의 차이는 "차이 없음"입니다: 구간 전체가 이 밖에 있어야 빨라짐/느려짐입니다.
NO_CHANGE_BAND = (0.95, 1.05)
# 적응 라운드의 목표: 모든 비율의 구간이 중앙값의 ±5% 안에 들어오면 멈춥니다.
TARGET_HALF_WIDTH = 0.05


@dataclass(frozen=True)
class Interval:
    median: float
    low: float
    high: float
    confidence: float  # 이 구간이 실제로 보장하는 신뢰 수준(라운드가 적으면 0.95보다 낮습니다)

    def as_dict(self) -> dict:
        return {
            "median": rounded(self.median),
            "low": rounded(self.low),
            "high": rounded(self.high),
            "confidence": round(self.confidence, 4),
        }


def rounded(value: float) -> float:
    """결과 파일에 쓰는 유효숫자 네 자리."""
    return float(f"{value:.4g}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def iqr(values: list[float]) -> float:
    """사분위 범위. 라운드가 4번보다 적으면 전체 범위입니다."""
    ordered = sorted(values)
    n = len(ordered)
    if n < 4:
        return ordered[-1] - ordered[0]
    return ordered[(3 * n) // 4] - ordered[n // 4]


def _binomial_cdf(k: int, n: int) -> float:
    """P(X ≤ k), X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def order_statistic_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, float]:
    """중앙값 구간 [x(k), x(n-k+1)]의 k(1부터)와 그 구간의 정확한 신뢰 수준.

    구간이 중앙값을 놓치는 것은 k개 미만 또는 n-k+1개 초과가 중앙값보다 작을 때뿐이라서,
    놓칠 확률은 2·P(Binomial(n, ½) ≤ k-1)입니다. 이것이 1-confidence 이하인 가장 큰 k를 고릅니다.
    라운드가 너무 적어(n < 6) 95%에 닿지 못하면 [최솟값, 최댓값]과 그 신뢰 수준을 돌려줍니다.
    """
    if n < 1:
        raise ValueError("라운드가 하나도 없습니다")
    best = 1
    for k in range(1, n // 2 + 1):
        if 2 * _binomial_cdf(k - 1, n) <= 1 - confidence:
            best = k
        else:
            break
    return best, 1 - 2 * _binomial_cdf(best - 1, n)


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> Interval:
    ordered = sorted(values)
    n = len(ordered)
    k, achieved = order_statistic_ranks(n, confidence)
    return Interval(median(ordered), ordered[k - 1], ordered[n - k], achieved)


def paired_ratios(baseline: list[float], variant: list[float]) -> list[float]:
    """라운드마다의 속도 비율(1보다 크면 변형이 빠름). 둘 다 일 하나당 시간입니다."""
    return [b / v for b, v in zip(baseline, variant, strict=False)]


def precise_enough(interval: Interval, target: float = TARGET_HALF_WIDTH) -> bool:
    """구간이 중앙값의 ±target 안에 있는지(적응 라운드의 멈춤 조건)."""
    return (
        interval.confidence >= CONFIDENCE
        and interval.low >= interval.median * (1 - target)
        and interval.high <= interval.median * (1 + target)
    )


def settled(interval: Interval, target: float = TARGET_HALF_WIDTH) -> bool:
    """적응 라운드의 멈춤 조건: 구간이 ±target 안이고, 판정의 경계(0.95, 1.05)를 걸치지 않습니다.
    경계를 걸친 구간은 라운드가 더 있으면 판정이 바뀔 수 있으므로 예산이 남는 동안 더 잽니다."""
    straddles = any(interval.low <= edge <= interval.high for edge in NO_CHANGE_BAND)
    return precise_enough(interval, target) and not straddles


def half_width(interval: Interval) -> float:
    """구간이 중앙값에서 가장 멀리 벗어난 비율(결과 파일의 width)."""
    return max(interval.high / interval.median - 1, 1 - interval.low / interval.median)


def verdict(low: float, high: float) -> str:
    """ "faster", "slower" 또는 "same": 구간 전체가 0.95–1.05 밖에 있을 때만 빨라짐/느려짐입니다."""
    if low > NO_CHANGE_BAND[1]:
        return "faster"
    if high < NO_CHANGE_BAND[0]:
        return "slower"
    return "same"


def no_change_percent(low: float, high: float) -> int:
    """차이 없음일 때 "±x%": 구간이 1에서 가장 멀리 벗어난 만큼(올림)."""
    return max(1, math.ceil(100 * max(high - 1, 1 - low) - 1e-9))


def round_order(keys: list[str], seed: int, round_index: int) -> list[str]:
    """라운드 하나에서 변형을 재는 순서. 시드와 라운드 번호로 정해지므로 결과 파일의 시드로
    순서를 그대로 다시 만들 수 있습니다."""
    order = list(keys)
    random.Random(f"{seed}:{round_index}").shuffle(order)
    return order
