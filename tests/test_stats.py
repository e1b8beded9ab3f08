"""torchdoctor/stats.py의 테스트(이슈 17, 40): 짝 비율, 순서 통계량 구간과 그 정확한 신뢰 수준,
구간으로 내리는 네 가지 판정, 시드로 다시 만드는 라운드 순서. 합성한 값만 씁니다(이 컴퓨터의
속도와 무관합니다)."""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import pytest

from torchdoctor import stats


def coverage(n: int, k: int) -> Fraction:
    """[x(k), x(n-k+1)]가 중앙값을 덮을 확률: 중앙값보다 작은 값의 개수 i가 k ≤ i ≤ n-k일 때입니다.
    stats의 식(2·P(X ≤ k-1)을 빼기)과 다른 길로, 분수로 정확히 셉니다."""
    return sum(Fraction(comb(n, i), 2**n) for i in range(k, n - k + 1))


def expected_rank(n: int) -> int:
    """덮을 확률이 95% 이상인 가장 큰 k(없으면 1: 최솟값과 최댓값)."""
    ranks = [k for k in range(1, n // 2 + 1) if coverage(n, k) >= Fraction(95, 100)]
    return max(ranks, default=1)


def test_nine_rounds_give_the_second_and_eighth_values_at_96_1_percent():
    k, confidence = stats.order_statistic_ranks(9)
    assert k == 2
    assert confidence == pytest.approx(1 - 20 / 512)  # 0.9609…: 1 − 2·(1 + 9)/2⁹
    values = [0.9, 1.3, 1.0, 1.2, 0.8, 1.1, 1.4, 0.7, 1.5]  # 정렬하면 0.7, 0.8, …, 1.5
    interval = stats.median_interval(values)
    assert (interval.low, interval.median, interval.high) == (0.8, 1.1, 1.4)
    assert interval.as_dict()["confidence"] == 0.9609


@pytest.mark.parametrize("n", range(1, 61))
def test_ranks_and_confidence_match_an_exact_count(n):
    k, confidence = stats.order_statistic_ranks(n)
    assert k == expected_rank(n)
    assert confidence == pytest.approx(float(coverage(n, k)), abs=1e-12)
    if n >= 6:
        assert confidence >= 0.95  # 여섯 라운드부터는 95%에 닿습니다


@pytest.mark.parametrize(("n", "confidence"), [(1, 0.0), (2, 0.5), (3, 0.75), (4, 0.875),
                                               (5, 0.9375)])  # fmt: skip
def test_fewer_than_six_rounds_give_min_and_max_with_their_lower_confidence(n, confidence):
    values = random.Random(n).sample(range(100), n)
    interval = stats.median_interval([float(v) for v in values])
    assert (interval.low, interval.high) == (min(values), max(values))
    assert interval.confidence == pytest.approx(confidence)
    assert interval.confidence < stats.CONFIDENCE


def test_even_rounds_take_the_mean_of_the_two_middle_values():
    interval = stats.median_interval([4.0, 1.0, 3.0, 2.0, 6.0, 5.0])
    assert interval.median == 3.5
    assert (interval.low, interval.high) == (1.0, 6.0)  # n = 6: k = 1, 96.9%


def test_no_rounds_is_an_error_not_an_interval():
    with pytest.raises(ValueError, match="라운드"):
        stats.median_interval([])


def test_paired_ratio_is_baseline_time_over_variant_time_per_round():
    # 두 번째 라운드는 기계가 두 배 느렸지만 양쪽이 함께 겪어 비율은 같습니다.
    assert stats.paired_ratios([2.0, 4.0, 3.0], [1.0, 2.0, 3.0]) == [2.0, 2.0, 1.0]


def test_the_stored_interval_keeps_four_significant_digits():
    raw = stats.Interval(1.234567, 1.111111, 1.3999999, 0.961234)
    assert raw.as_dict() == {"median": 1.235, "low": 1.111, "high": 1.4, "confidence": 0.9612}


@pytest.mark.parametrize(
    ("low", "median", "high", "confidence", "precise"),
    [
        (0.96, 1.0, 1.04, 0.96, True),
        (0.95, 1.0, 1.05, 0.96, True),  # 경계는 안입니다
        (0.94, 1.0, 1.04, 0.96, False),
        (0.96, 1.0, 1.051, 0.96, False),
        (1.9, 2.0, 2.09, 0.96, True),  # ±5%는 중앙값에 대한 비율입니다(1이 아니라)
        (0.99, 1.0, 1.01, 0.9375, False),  # 95%에 못 미치는 구간으로는 멈추지 않습니다
    ],
)
def test_precise_enough_means_within_five_percent_of_the_median_at_95(
    low, median, high, confidence, precise
):
    interval = stats.Interval(median, low, high, confidence)
    assert stats.precise_enough(interval) is precise


def test_the_stopping_rule_looks_at_the_width_never_at_the_verdict_edges():
    # 1.05를 걸친 좁은 구간도 멈춥니다: 경계를 벗어날 때까지 더 재면 선택적 멈춤입니다(이슈 40).
    assert stats.precise_enough(stats.Interval(1.05, 1.03, 1.07, 0.96))
    assert stats.precise_enough(stats.Interval(0.95, 0.93, 0.97, 0.96))


def test_half_width_is_the_farther_side_relative_to_the_median():
    assert stats.half_width(stats.Interval(2.0, 1.9, 2.2, 0.96)) == pytest.approx(0.1)
    assert stats.half_width(stats.Interval(2.0, 1.6, 2.1, 0.96)) == pytest.approx(0.2)


@pytest.mark.parametrize(
    ("low", "high", "verdict", "side"),
    [
        (1.06, 1.3, "faster", "faster"),
        (1.05, 1.3, "inconclusive", "faster"),  # 1.05에 닿으면 띠 밖이라고 할 수 없습니다
        (0.7, 0.94, "slower", "slower"),
        (0.7, 0.95, "inconclusive", "slower"),
        (0.81, 0.96, "inconclusive", "slower"),  # 한쪽이지만 띠에 걸침: 판정 보류, 느린 쪽
        (0.8, 1.2, "inconclusive", None),  # 넓은 구간: 어느 쪽이라고도 할 수 없습니다
        (0.97, 1.02, "same", None),  # 띠 안: 차이가 ±5%보다 작다는 진술입니다
        (0.95, 1.05, "same", None),  # 띠의 끝점은 안입니다
        (1.01, 1.04, "same", "faster"),  # 띠 안이면 1을 빼도 차이 없음입니다
        (1.04, 1.06, "inconclusive", "faster"),
    ],
)
def test_four_verdicts_come_from_the_whole_interval_against_the_band(low, high, verdict, side):
    assert stats.verdict(low, high) == verdict
    assert stats.side(low, high) == side
    assert stats.Interval((low + high) / 2, low, high, 0.96).verdict == verdict


KEYS = ["baseline", "bf16", "fp16", "tf32", "compile"]


def test_round_order_is_a_permutation_that_the_recorded_seed_reproduces():
    first = stats.round_order(KEYS, seed=2026, round_index=3)
    assert sorted(first) == sorted(KEYS)
    assert stats.round_order(KEYS, seed=2026, round_index=3) == first
    # 결과 파일의 시드로 나중에도 같은 순서를 만들 수 있어야 합니다: 알고리즘이 바뀌면 실패합니다.
    assert stats.round_order(["a", "b", "c", "d"], seed=7, round_index=0) == ["d", "c", "b", "a"]


def test_round_order_varies_between_rounds_and_seeds():
    orders = [tuple(stats.round_order(KEYS, 2026, r)) for r in range(40)]
    assert len(set(orders)) >= 20  # 120가지 순서 가운데 40라운드면 여럿이 나옵니다
    firsts = {order[0] for order in orders}
    assert firsts == set(KEYS)  # 어느 변형도 늘 처음(또는 늘 마지막)에 재지 않습니다
    other_seed = [tuple(stats.round_order(KEYS, 2027, r)) for r in range(40)]
    assert other_seed != orders


def test_round_order_does_not_touch_the_callers_list():
    keys = list(KEYS)
    stats.round_order(keys, 1, 1)
    assert keys == KEYS
