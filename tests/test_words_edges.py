"""torchdoctor/words.py의 경계: 신뢰 수준이 정확히 95%인 구간과 그보다 낮은 구간, 시간 단위가
바뀌는 곳."""

from __future__ import annotations

import pytest

from torchdoctor import stats, words


def test_an_interval_at_exactly_95_percent_needs_no_note_and_one_below_says_its_level():
    assert words.ratio_text(stats.Interval(1.5, 1.4, 1.6, 0.95)) == "1.50배 (1.40–1.60, 빨라짐)"
    low = stats.Interval(1.5, 1.4, 1.6, 0.75)
    assert words.confidence_note(low) == ", 라운드가 적어 신뢰 수준 75%"
    assert words.level_of(low) == "75%"
    assert (
        words.level_of(stats.Interval(1.5, 1.4, 1.6, 0.99)) == "95%"
    )  # 95%보다 높게 쓰지 않습니다


def test_a_cumulative_ratio_with_few_rounds_says_its_level():
    interval = stats.Interval(2.0, 1.5, 2.5, 0.75)
    assert words.cumulative_text(interval) == "2.00배 (1.50–2.50, 라운드가 적어 신뢰 수준 75%)"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "2.5 s"), (0.0123, "12.3 ms"), (5e-6, "5 µs"), (5e-9, "5 ns"), (0.0, "0 ns")],
)
def test_seconds_take_the_largest_unit_they_reach(seconds, text):
    assert words.format_seconds(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"), [(999.6, "999.6배"), (9.6, "9.60배"), (10.5, "10.5배"), (0.5, "0.50배")]
)
def test_a_ratio_picks_its_digits_from_the_rounded_value(value, text):
    assert words.format_ratio(value) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [(10.5, 11.0, "10.5–11.0"), (0.5, 0.6, "0.50–0.60"), (5, 6, "5.00–6.00")],
)
def test_interval_bounds_pick_their_digits_from_the_lower_end(low, high, text):
    assert words.interval_bounds(low, high) == text
