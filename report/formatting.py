"""숫자와 이름을 사람이 읽는 글자로: 큰 수의 쉼표, 조사, 따옴표.

시간 단위, 배수, 구간의 자릿수는 진단 보고서도 쓰므로 torchdoctor/words.py에 있습니다. 표, 결론
문장, 차트, 요약 명령이 모두 이 두 곳의 함수로 써서 같은 숫자가 어디서나 같은 글자가 됩니다.
"""

from __future__ import annotations


def format_number(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def josa(word: str, pair: str) -> str:
    """한글로 끝나는 낱말 뒤의 조사: josa("메모리", "은/는") == "메모리는"."""
    last = word.rstrip()[-1]
    if not "가" <= last <= "힣":
        raise ValueError(
            f"한글로 끝나지 않는 낱말에는 받침에 따른 조사를 붙이지 않습니다: {word!r}"
        )
    final = (ord(last) - ord("가")) % 28
    with_final, without = pair.split("/")
    if pair == "으로/로":
        return word + ("로" if final in (0, 8) else "으로")
    return word + (with_final if final else without)


def quoted(label: str) -> str:
    return f"‘{label}’"
