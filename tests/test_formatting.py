"""report/formatting.py의 테스트: 큰 수의 쉼표, 조사, 따옴표.

표, 결론 문장, 차트, 요약 명령이 모두 이 함수로 글자를 쓰므로, 쉼표가 붙는 경계(1,000)의 양쪽과
한글 음절 블록의 양 끝에서 나오는 글자를 그대로 비교합니다. 시간 단위, 배수, 구간의 자릿수는
torchdoctor/words.py에 있고 tests/test_words.py가 확인합니다.
"""

from __future__ import annotations

import pytest

from report import formatting


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1000, "1,000"), (12345.6, "12,346"), (999.4, "999"), (64, "64"), (0.25, "0.25")],
)
def test_numbers_from_a_thousand_get_commas_and_smaller_ones_three_digits(value, expected):
    assert formatting.format_number(value) == expected


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
