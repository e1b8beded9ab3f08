"""benchmarks/formatting.py의 테스트: 시간 단위, 큰 수의 쉼표, 배수와 구간의 자릿수, 조사, 따옴표.

표, 결론 문장, 차트, 요약 명령이 모두 이 함수로 숫자를 쓰므로, 단위가 바뀌는 경계(1 s, 1 ms, 1 µs,
1,000, 10, 0.1)의 양쪽에서 나오는 글자를 그대로 비교합니다.
"""

from __future__ import annotations

import pytest

from report import formatting


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
    assert formatting.format_seconds(seconds) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1000, "1,000"), (12345.6, "12,346"), (999.4, "999"), (64, "64"), (0.25, "0.25")],
)
def test_numbers_from_a_thousand_get_commas_and_smaller_ones_three_digits(value, expected):
    assert formatting.format_number(value) == expected


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
    assert formatting.format_ratio(value) == expected


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
    assert formatting.interval_bounds(low, high) == expected


@pytest.mark.parametrize(
    ("word", "subject", "direction"),
    [
        ("가", "가가", "가로"),  # 한글 음절의 첫 글자: 받침 없음
        ("힣", "힣이", "힣으로"),  # 마지막 글자: 받침 ㅎ
        ("길", "길이", "길로"),  # ㄹ 받침 뒤의 "로"
        ("집", "집이", "집으로"),
        ("메모리 ", "메모리 가", "메모리 로"),  # 끝의 빈칸은 받침을 볼 때만 뺍니다
    ],
)
def test_particles_at_the_edges_of_the_hangul_block(word, subject, direction):
    assert formatting.josa(word, "이/가") == subject
    assert formatting.josa(word, "으로/로") == direction


def test_a_word_that_does_not_end_in_hangul_is_refused_with_the_word_in_the_message():
    with pytest.raises(ValueError) as caught:
        formatting.josa("bf16", "이/가")
    assert str(caught.value) == (
        "한글로 끝나지 않는 낱말에는 받침에 따른 조사를 붙이지 않습니다: 'bf16'"
    )


def test_quoted_uses_single_curly_quotes():
    assert formatting.quoted("bf16 autocast") == "‘bf16 autocast’"
