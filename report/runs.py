"""실행 사이의 구간: 같은 코드로 따로 실행한 결과들의 중앙값 비율로 내는 95% 구간입니다.

한 실행의 라운드로 낸 구간(torchdoctor/stats.py)은 그 실행이 겪은 기계 상태만 담습니다. 같은 코드를
다시 실행하면 효과 자체가 그 구간보다 크게 움직이므로(docs/method.md#runs), 실행을 표본 하나로 보고
로그 중앙값의 평균에 t 구간을 씁니다. 실행이 서너 번뿐이면 행 하나의 분산 추정은 크게 흔들리므로,
장치 하나의 모든 행이 분산의 사전 분포를 함께 추정하고 행마다 그쪽으로 당깁니다(Smyth 2004,
limma의 경험적 베이즈 조정 t). 사이트 빌드는 scipy 없이 돌기에 감마 함수의 도함수와 t 분위수를
여기서 계산합니다.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from results_format.schema import MAX_RUNS
from torchdoctor.stats import CONFIDENCE, Interval

Z_975 = 1.959963984540054


def digamma(x: float) -> float:
    """ψ(x): 작은 x는 ψ(x) = ψ(x+1) - 1/x로 올린 다음 점근 전개."""
    shift = 0.0
    while x < 10:
        shift -= 1 / x
        x += 1
    inv = 1 / (x * x)
    return shift + math.log(x) - 0.5 / x - inv * (1 / 12 - inv * (1 / 120 - inv / 252))


def trigamma(x: float) -> float:
    """ψ'(x): 같은 방법으로 올린 다음 점근 전개."""
    shift = 0.0
    while x < 10:
        shift += 1 / (x * x)
        x += 1
    inv = 1 / (x * x)
    return shift + 1 / x + inv / 2 + inv / x * (1 / 6 - inv * (1 / 30 - inv / 42))


def trigamma_inverse(y: float) -> float:
    """ψ'(x) = y인 x(limma의 뉴턴 반복: 1/ψ'가 거의 직선인 것을 이용)."""
    x = 0.5 + 1 / y if y < 1e6 else 1 / math.sqrt(y)
    for _ in range(50):
        tri = trigamma(x)
        step = tri * (1 - tri / y) / _tetragamma(x)
        x += step
        if -step / x < 1e-10:
            break
    return x


def _tetragamma(x: float) -> float:
    """ψ''(x). 뉴턴 반복의 기울기에만 씁니다."""
    shift = 0.0
    while x < 10:
        shift -= 2 / x**3
        x += 1
    inv = 1 / (x * x)
    return shift - inv - inv / x - inv * inv * (0.5 - inv * (1 / 6 - inv / 6))


def _t_density(t: float, df: float) -> float:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _t_cdf(x: float, df: float, steps: int = 2000) -> float:
    """P(T ≤ x), x ≥ 0: 0에서 x까지 밀도를 심프슨 적분합니다."""
    h = x / steps
    inner = sum((4 if i % 2 else 2) * _t_density(i * h, df) for i in range(1, steps))
    return 0.5 + (_t_density(0, df) + _t_density(x, df) + inner) * h / 3


@functools.cache  # 한 장치의 행들은 대개 같은 자유도를 씁니다
def t_quantile(df: float) -> float:
    """t 분포(자유도 df, 정수가 아니어도 됨)의 97.5% 분위수. df가 무한이면 정규 분포의 값."""
    if math.isinf(df):
        return Z_975
    low, high = Z_975, 1.0
    while _t_cdf(high, df) < 0.975:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if _t_cdf(middle, df) < 0.975 else (low, middle)
    return (low + high) / 2


@dataclass(frozen=True)
class Prior:
    """행들이 함께 쓰는 실행 사이 분산(로그 비율)의 사전 분포: 척도 역카이제곱(자유도 df, 척도
    variance). df가 무한이면 모든 행이 같은 분산을 씁니다."""

    df: float
    variance: float


def log_spread(medians: list[float]) -> tuple[float, float, int]:
    """로그 중앙값들의 평균, 표본 분산, 자유도."""
    runs = len(medians)
    if not 2 <= runs <= MAX_RUNS:
        raise ValueError(f"실행은 2개에서 {MAX_RUNS}개 사이여야 합니다: {runs}개")
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / runs
    return mean, sum((x - mean) ** 2 for x in logs) / (runs - 1), runs - 1


def fit_prior(spreads: list[tuple[float, int]]) -> Prior | None:
    """행마다의 (표본 분산, 자유도)에서 사전 분포를 모멘트로 추정합니다(limma의 fitFDist).

    log s²의 평균과 분산에서 자유도가 주는 몫(ψ, ψ')을 빼면 사전 분포의 몫이 남습니다. 행이 셋보다
    적거나 분산이 0인 행뿐이면 추정하지 않습니다(None: 행마다 자기 분산만 씁니다)."""
    usable = [(variance, df) for variance, df in spreads if variance > 0]
    if len(usable) < 3:
        return None
    centred = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v, d in usable]
    mean = sum(centred) / len(centred)
    spread = sum((x - mean) ** 2 for x in centred) / (len(centred) - 1)
    excess = spread - sum(trigamma(d / 2) for _, d in usable) / len(usable)
    if excess <= 0:
        return Prior(math.inf, math.exp(mean))
    df = 2 * trigamma_inverse(excess)
    return Prior(df, math.exp(mean + digamma(df / 2) - math.log(df / 2)))


def interval(medians: list[float], prior: Prior | None = None) -> Interval:
    """실행마다의 중앙값 비율로 낸 95% 구간. prior가 있으면 행의 분산을 사전 분포 쪽으로 당기고
    자유도를 그만큼 더합니다(조정 t). 배수는 실행 중앙값들의 기하 평균입니다."""
    mean, variance, df = log_spread(medians)
    if prior is not None and math.isinf(prior.df):
        variance, df = prior.variance, math.inf
    elif prior is not None:
        variance = (prior.df * prior.variance + df * variance) / (prior.df + df)
        df = prior.df + df
    half = t_quantile(df) * math.sqrt(variance / len(medians))
    return Interval(
        math.exp(mean), math.exp(mean - half), math.exp(mean + half), CONFIDENCE, len(medians)
    )
