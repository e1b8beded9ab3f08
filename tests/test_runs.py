"""report/runs.py의 테스트(이슈 40): 실행 사이의 구간, t 분위수, 경험적 베이즈의 사전 분포.
합성한 값만 씁니다(이 컴퓨터의 속도와 무관합니다). 감마 함수의 도함수는 torch.special과 견줍니다."""

from __future__ import annotations

import math
import random

import pytest
import torch

from report import runs
from torchdoctor import stats

# 통계 표에 실린 t 분포의 97.5% 분위수(자유도 1–7, 10, 30).
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 10: 2.228,
           30: 2.042}  # fmt: skip


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_the_t_quantile_matches_the_printed_table(df):
    assert runs.t_quantile(df) == pytest.approx(T_TABLE[df], abs=6e-4)


def test_the_t_quantile_of_a_fractional_df_lies_between_its_neighbours_and_tends_to_normal():
    assert runs.t_quantile(3) > runs.t_quantile(3.5) > runs.t_quantile(4)
    assert runs.t_quantile(math.inf) == pytest.approx(1.95996, abs=1e-5)
    assert runs.t_quantile(1000) == pytest.approx(1.9623, abs=1e-3)


@pytest.mark.parametrize("x", [0.05, 0.5, 1.0, 2.5, 7.0, 40.0])
def test_digamma_and_trigamma_agree_with_torch_special(x):
    value = torch.tensor(x, dtype=torch.float64)
    assert runs.digamma(x) == pytest.approx(torch.special.digamma(value).item(), rel=1e-9)
    assert runs.trigamma(x) == pytest.approx(torch.special.polygamma(1, value).item(), rel=1e-9)
    assert runs._tetragamma(x) == pytest.approx(torch.special.polygamma(2, value).item(), rel=1e-8)


@pytest.mark.parametrize("x", [0.02, 0.3, 1.0, 4.0, 60.0])
def test_trigamma_inverse_undoes_trigamma(x):
    assert runs.trigamma_inverse(runs.trigamma(x)) == pytest.approx(x, rel=1e-7)


def test_without_a_prior_the_interval_is_the_t_interval_of_the_log_medians():
    medians = [1.10, 1.20, 1.15]
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    interval = runs.interval(medians)
    assert interval.median == pytest.approx(math.exp(mean))
    assert interval.low == pytest.approx(math.exp(mean - 4.303 * sd / math.sqrt(3)), rel=1e-4)
    assert interval.high == pytest.approx(math.exp(mean + 4.303 * sd / math.sqrt(3)), rel=1e-4)
    assert (interval.runs, interval.confidence) == (3, 0.95)


def test_a_prior_pulls_the_rows_variance_toward_it_and_adds_its_degrees_of_freedom():
    medians = [1.10, 1.1001, 1.0999]  # 우연히 거의 같은 세 실행
    alone = runs.interval(medians)
    pulled = runs.interval(medians, runs.Prior(df=4.0, variance=0.02**2))
    assert pulled.high - pulled.low > 10 * (alone.high - alone.low)
    _, variance, _ = runs.log_spread(medians)
    expected = runs.t_quantile(6.0) * math.sqrt((4 * 0.02**2 + 2 * variance) / 6 / 3)
    assert math.log(pulled.high / pulled.median) == pytest.approx(expected, rel=1e-6)
    same = runs.interval(medians, runs.Prior(df=math.inf, variance=0.02**2))
    assert math.log(same.high / same.median) == pytest.approx(1.95996 * 0.02 / math.sqrt(3), 1e-4)


@pytest.mark.parametrize("count", [0, 1, 9])
def test_the_interval_needs_two_to_max_runs_medians(count):
    with pytest.raises(ValueError, match="실행은"):
        runs.interval([1.0] * count)


def _scaled_inverse_chi2(rng: random.Random, df: float, scale: float) -> float:
    return df * scale / rng.gammavariate(df / 2, 2)


def test_fit_prior_recovers_the_prior_that_made_the_variances():
    rng = random.Random(7)
    spreads = []
    for _ in range(4000):
        sigma2 = _scaled_inverse_chi2(rng, 5.0, 0.03**2)
        spreads.append((sigma2 * rng.gammavariate(1.0, 2.0) / 2, 2))  # 자유도 2의 표본 분산
    prior = runs.fit_prior(spreads)
    assert prior.df == pytest.approx(5.0, rel=0.3)
    assert math.sqrt(prior.variance) == pytest.approx(0.03, rel=0.1)


def test_fit_prior_needs_three_rows_and_calls_equal_variances_one_shared_value():
    assert runs.fit_prior([(0.01, 2), (0.02, 2)]) is None
    rng = random.Random(3)
    equal = [(0.02**2 * rng.gammavariate(1.0, 2.0) / 2, 2) for _ in range(3000)]
    prior = runs.fit_prior(equal)
    assert prior.df > 50 or math.isinf(prior.df)


def _run_median(rng: random.Random, true_log: float, between: float, within: float) -> float:
    """실행 하나의 중앙값: 실행마다 효과가 between만큼 움직이고 라운드는 within만큼 흔들립니다."""
    shift = rng.gauss(0, between)
    return stats.median([math.exp(true_log + shift + rng.gauss(0, within)) for _ in range(15)])


def test_with_run_to_run_drift_one_runs_interval_misses_and_three_runs_cover():
    """실행 사이의 흔들림이 실행 안보다 클 때(측정한 SDPA 행처럼): 한 실행의 라운드로 낸 구간은
    참값을 자주 놓치고, 세 실행의 구간은 95% 가까이 덮습니다. 한 실행의 구간만 쓰던 예전 규칙이면
    앞의 단언이 깨집니다."""
    rng = random.Random(40)
    true_log, trials = math.log(1.05), 1500
    one_run = three_runs = 0
    for _ in range(trials):
        shift = rng.gauss(0, 0.06)
        rounds = [math.exp(true_log + shift + rng.gauss(0, 0.03)) for _ in range(15)]
        own = stats.median_interval(rounds)
        one_run += own.low <= 1.05 <= own.high
        medians = [own.median, *(_run_median(rng, true_log, 0.06, 0.03) for _ in range(2))]
        combined = runs.interval(medians)
        three_runs += combined.low <= 1.05 <= combined.high
    assert one_run / trials < 0.6
    assert 0.92 <= three_runs / trials <= 0.98


def test_the_moderated_interval_keeps_its_coverage_when_rows_have_different_variances():
    """행마다 실행 사이 분산이 다르고(사전 분포에서 뽑음) 실행이 셋일 때, 사전 분포를 추정해 당긴
    구간도 95% 가까이 덮습니다."""
    rng = random.Random(41)
    rows = []
    for _ in range(1500):
        sigma = math.sqrt(_scaled_inverse_chi2(rng, 3.0, 0.025**2))
        rows.append([math.exp(0.1 + rng.gauss(0, sigma)) for _ in range(3)])
    prior = runs.fit_prior([runs.log_spread(row)[1:] for row in rows])
    covered = 0
    for row in rows:
        interval = runs.interval(row, prior)
        covered += interval.low <= math.exp(0.1) <= interval.high
    assert 0.93 <= covered / len(rows) <= 0.97
