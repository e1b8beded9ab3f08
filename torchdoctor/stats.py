"""짝지은 비율의 구간과 판정: 사이트의 모든 표와 torchdoctor의 보고서가 쓰는 한 가지 규칙입니다.

라운드마다 모든 변형을 한 번씩 섞인 순서로 재므로(torchdoctor/rounds.py), 라운드 i의 비율
r_i = (기준 시간/일) ÷ (변형 시간/일)은 그 라운드의 기계 상태를 양쪽이 함께 겪은 값입니다.
중앙값의 95% 신뢰구간은 순서 통계량으로 냅니다(부호 검정을 뒤집은, 분포를 가정하지 않는 정확한
방법). torch를 가져오지 않습니다: 사이트 빌드도 이 모듈을 씁니다.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass

CONFIDENCE = 0.95
# 판정의 띠: 구간 전체가 이 밖이면 빨라짐/느려짐, 전체가 이 안이면 차이 없음, 걸치면 판정 보류.
NO_CHANGE_BAND = (0.95, 1.05)
# 라운드를 더 하지 않는 정밀도: 구간이 중앙값의 ±5% 안에 들어오면 멈춥니다(답이 아니라 폭으로).
TARGET_HALF_WIDTH = 0.05
VERDICTS = ("faster", "slower", "same", "inconclusive")


def verdict(low: float, high: float) -> str:
    """구간과 ±5% 띠로 내리는 네 가지 판정."""
    if low > NO_CHANGE_BAND[1]:
        return "faster"
    if high < NO_CHANGE_BAND[0]:
        return "slower"
    if NO_CHANGE_BAND[0] <= low and high <= NO_CHANGE_BAND[1]:
        return "same"
    return "inconclusive"


def side(low: float, high: float) -> str | None:
    """구간이 1을 빼고 한쪽에 있으면 그쪽("faster" 또는 "slower"), 1을 품으면 None."""
    if low > 1:
        return "faster"
    if high < 1:
        return "slower"
    return None


@dataclass(frozen=True)
class Interval:
    """짝 비율의 중앙값과 구간. 1보다 크면 변형이 기준보다 빠릅니다."""

    median: float
    low: float
    high: float
    confidence: float  # 이 구간이 실제로 보장하는 신뢰 수준(라운드가 적으면 0.95보다 낮습니다)
    runs: int = 1  # 구간을 낸 실행의 수. 2 이상이면 실행 사이의 구간입니다(report/runs.py)

    @classmethod
    def of(cls, raw: dict | None) -> Interval | None:
        return cls(raw["median"], raw["low"], raw["high"], raw["confidence"]) if raw else None

    @property
    def verdict(self) -> str:
        return verdict(self.low, self.high)

    @property
    def side(self) -> str | None:
        return side(self.low, self.high)

    def inverse(self) -> Interval:
        return Interval(1 / self.median, 1 / self.high, 1 / self.low, self.confidence, self.runs)

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


@functools.cache  # 라운드마다 다시 부릅니다: n이 같으면 답도 같습니다
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
    """라운드를 멈출 조건: 구간이 95%를 보장하고 중앙값의 ±target 안에 있습니다.

    판정의 경계(0.95, 1.05)는 보지 않습니다. 경계를 벗어날 때까지 더 재면(선택적 멈춤) 경계에 있는
    참값을 "빨라짐"으로 읽는 일이 95% 구간이 허락하는 2.5%보다 훨씬 잦아집니다."""
    return (
        interval.confidence >= CONFIDENCE
        and interval.low >= interval.median * (1 - target)
        and interval.high <= interval.median * (1 + target)
    )


def half_width(interval: Interval) -> float:
    """구간이 중앙값에서 가장 멀리 벗어난 비율(결과 파일의 width)."""
    return max(interval.high / interval.median - 1, 1 - interval.low / interval.median)


def round_order(keys: list[str], seed: int, round_index: int) -> list[str]:
    """라운드 하나에서 변형을 재는 순서. 시드와 라운드 번호로 정해지므로 결과 파일의 시드로
    순서를 그대로 다시 만들 수 있습니다."""
    order = list(keys)
    random.Random(f"{seed}:{round_index}").shuffle(order)
    return order
