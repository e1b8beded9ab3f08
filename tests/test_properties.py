"""서식과 통계의 성질 시험(hypothesis): 손으로 고른 값 사이의 틈을 찾습니다. 손으로 고른 기대값
(tests/test_words.py, tests/test_stats.py)을 대신하지 않고 곁에 둡니다. 예전 0.01 아래의
`.2g` 갈래는 고른 값 둘(0.099, 0.0123)이 두 서식에서 같은 글자라 바뀌어도 아무 시험도 실패하지
않았습니다(감사 보고서 §5의 4번)."""

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from torchdoctor import stats, words

POSITIVE = st.floats(min_value=1e-7, max_value=1e7, allow_nan=False, allow_infinity=False)
SCORE = {"slower": -1, "same": 0, "inconclusive": 0, "faster": 1}


def number_in(text: str) -> float:
    return float(re.fullmatch(r"([0-9.,e+-]+)배", text)[1].replace(",", ""))


@given(POSITIVE)
def test_a_ratio_keeps_two_significant_digits_at_every_magnitude(value):
    # 유효숫자 두 자리라면 적은 수와 참값의 차이는 맨 앞 자리 단위의 반(5%) 이내입니다.
    shown = number_in(words.format_ratio(value))
    assert math.isclose(shown, value, rel_tol=0.05), (value, words.format_ratio(value))


def test_the_significant_digit_property_sees_the_old_gap():
    # `.2g`를 `.3f`로 바꾸면 0.0012는 "0.001배"가 되어 위 성질이 실패합니다.
    assert not math.isclose(float(f"{0.0012:.3f}"), 0.0012, rel_tol=0.05)


SAMPLES = st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=120)


@given(SAMPLES)
def test_the_median_interval_contains_the_sample_median_and_is_ordered(values):
    interval = stats.median_interval(values)
    assert interval.low <= interval.median <= interval.high
    assert min(values) <= interval.low and interval.high <= max(values)
    assert interval.median == stats.median(sorted(values))
    assert 0 <= interval.confidence <= 1  # 한 라운드의 [x, x]는 신뢰 수준 0입니다


BOUNDS = st.tuples(st.floats(0.5, 2.0), st.floats(0.5, 2.0)).map(sorted)


@given(BOUNDS, st.floats(0, 0.5), st.floats(0, 0.5))
def test_the_verdict_never_gets_worse_when_the_interval_moves_up(bounds, up_low, up_high):
    low, high = bounds
    raised_low, raised_high = low + up_low, max(high + up_high, low + up_low)
    assert SCORE[stats.verdict(raised_low, raised_high)] >= SCORE[stats.verdict(low, high)]


@given(BOUNDS, st.floats(0, 0.5), st.floats(0, 0.5))
def test_a_narrower_interval_keeps_a_clear_verdict(bounds, in_low, in_high):
    low, high = bounds
    new_low = low + min(in_low, (high - low) / 2)
    new_high = max(high - in_high, new_low)
    if stats.verdict(low, high) != "inconclusive":
        assert stats.verdict(new_low, new_high) == stats.verdict(low, high)


@given(BOUNDS)
def test_a_clear_verdict_means_the_whole_interval_is_on_one_side_of_the_band(bounds):
    low, high = bounds
    kind = stats.verdict(low, high)
    lo_band, hi_band = stats.NO_CHANGE_BAND
    assert (kind == "faster") == (low > hi_band)
    assert (kind == "slower") == (high < lo_band)
    assert (kind == "same") == (lo_band <= low and high <= hi_band)
