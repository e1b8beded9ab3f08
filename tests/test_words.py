"""torchdoctor/words.py의 테스트: 잰 비율 하나가 어디서나(표, 결론, 요약, 진단 보고서) 같은 글자가
되는지, 네 가지 판정의 말과 그 쪽(이슈 40), 그리고 시간 단위·배수·구간의 자릿수가 바뀌는 경계
(1 s, 1 ms, 1 µs, 1,000, 10, 0.1)의 양쪽에서 나오는 글자."""

from __future__ import annotations

import pytest

from torchdoctor import stats, words


@pytest.mark.parametrize(
    ("raw", "text", "verdict"),
    [
        ((1.43, 1.38, 1.49, 0.961), "1.43배 (1.38–1.49, 빨라짐)", "faster"),
        ((0.50, 0.48, 0.52, 0.961), "0.50배 (0.48–0.52, 느려짐)", "slower"),
        ((1.01, 0.97, 1.03, 0.961), "차이 없음 (0.97–1.03배)", "same"),
        # 이슈 40: 한쪽에 있지만 띠의 경계에 걸치면 판정 보류와 그 쪽입니다.
        ((0.88, 0.81, 0.96, 0.961), "판정 보류: 0.81–0.96배, 느린 쪽", "inconclusive"),
        ((1.05, 1.03, 1.08, 0.961), "판정 보류: 1.03–1.08배, 빠른 쪽", "inconclusive"),
        ((1.2, 0.9, 1.6, 0.961), "판정 보류: 0.90–1.60배", "inconclusive"),  # 1을 품은 넓은 구간
        ((0.83, 0.80, 0.86, 0.9375), "0.83배 (0.80–0.86, 느려짐, 라운드가 적어 신뢰 수준 94%)",
         "slower"),
        ((21.6, 20.1, 23.0, 0.961), "21.6배 (20.1–23.0, 빨라짐)", "faster"),
        ((2e-6, 1e-6, 3e-6, 0.961), "2e-06배 (1e-06–3e-06, 느려짐)", "slower"),
        # 중앙값과 같은 유효 숫자 두 자리: "0.03–0.03"처럼 뭉개지지 않습니다.
        ((0.026, 0.0252, 0.0271, 0.961), "0.026배 (0.025–0.027, 느려짐)", "slower"),
        ((990_000.0, 980_000.0, 1e6, 0.961), "990,000배 (980,000–1,000,000, 빨라짐)", "faster"),
    ],
)  # fmt: skip
def test_a_ratio_reads_its_interval_and_one_of_four_verdicts(raw, text, verdict):
    value = stats.Interval(*raw)
    assert words.ratio_text(value) == text and value.verdict == verdict


def test_no_difference_is_written_only_for_an_interval_inside_the_band():
    # 이슈 40의 목표: ±5% 띠 안이 아닌 구간에는 어디서도 "차이 없음"을 쓰지 않습니다.
    for low in (0.80, 0.90, 0.94, 0.949, 0.95, 0.97, 1.0):
        for high in (1.0, 1.03, 1.05, 1.051, 1.06, 1.2):
            text = words.ratio_text(stats.Interval((low + high) / 2, low, high, 0.961))
            inside = 0.95 <= low and high <= 1.05
            assert ("차이 없음" in text) is inside, (low, high, text)


def test_the_cumulative_text_has_no_verdict():
    assert words.cumulative_text(stats.Interval(1.47, 1.40, 1.55, 0.961)) == "1.47배 (1.40–1.55)"


def test_every_verdict_has_a_word():
    assert set(words.WORDS) == set(stats.VERDICTS)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (125.0, "125 s"),
        (1.0, "1 s"),  # 경계에서는 큰 단위
        (0.999, "999 ms"),
        (0.0618, "61.8 ms"),
        (1e-3, "1 ms"),
        (1e-6, "1 µs"),
        (2.5e-9, "2.5 ns"),
        (5e-10, "0.5 ns"),
    ],
)
def test_seconds_take_the_largest_unit_they_reach_with_three_significant_digits(seconds, expected):
    assert words.format_seconds(seconds) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12345, "12,345배"),
        (1000, "1,000배"),
        (999.96, "1,000배"),  # 반올림하면 1,000: "1000.0배"가 아닙니다
        (999.5, "999.5배"),  # 소수 한 자리로 반올림해 고릅니다: 정수로 반올림하면 "1,000배"
        (10, "10.0배"),
        (9.996, "10.0배"),
        (21.64, "21.6배"),
        (9.99, "9.99배"),
        (1.434, "1.43배"),
        (0.1, "0.10배"),
        (0.099, "0.099배"),
        (0.0123, "0.012배"),
    ],
)
def test_a_ratio_keeps_its_significant_digits_at_every_size(value, expected):
    assert words.format_ratio(value) == expected


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (1000, 1200, "1,000–1,200"),
        (999.9, 1200, "999.9–1,200.0"),
        (10, 12, "10.0–12.0"),
        (9.9, 10.2, "9.90–10.20"),
        (0.1, 0.2, "0.10–0.20"),
        (0.099, 0.12, "0.099–0.12"),
        (0.025, 0.027, "0.025–0.027"),  # 소수점 두 자리라면 "0.03–0.03"으로 뭉개집니다
    ],
)
def test_interval_bounds_use_the_digits_of_their_lower_end(low, high, expected):
    assert words.interval_bounds(low, high) == expected


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "2.5 s"), (0.00737, "7.37 ms"), (0.00011, "110 µs"), (3.2e-8, "32 ns"),
     (1e-9, "1 ns")],
)  # fmt: skip
def test_format_seconds_picks_a_readable_unit(seconds, text):
    assert words.format_seconds(seconds) == text


@pytest.mark.parametrize(
    ("ratio_value", "text"),
    [(2.75, "2.75배"), (0.53, "0.53배"), (12.34, "12.3배"), (0.0123, "0.012배"),
     (2e-6, "2e-06배"), (990_000.0, "990,000배")],
)  # fmt: skip
def test_format_ratio_keeps_two_significant_digits_at_any_size(ratio_value, text):
    assert words.format_ratio(ratio_value) == text
