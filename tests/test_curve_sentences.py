"""report/curve_sentences.py의 테스트: 스윕과 손익분기의 문장.

교차점의 종류(범위 전체, 교차 없음, 여기부터, 여기까지만, 오르내림)마다, 그리고 본전을 찾을 때와
못 찾을 때의 문장 전체를 비교합니다. 점은 합성한 값입니다(판정은 구간으로만 내립니다).
"""

from __future__ import annotations

import pytest

from guide import registry
from report import analysis, curve_sentences, curves
from torchdoctor.stats import Interval

FASTER, SLOWER, SAME = (1.4, 1.3, 1.5), (0.5, 0.45, 0.55), (1.0, 0.97, 1.03)
HELD = (1.05, 1.02, 1.09)  # 1.05에 걸친 구간: 판정 보류
WIDTH = registry.Sweep("width", "폭", "d_model", "폭(d_model)", "fp32", "bf16")


def points(*stretch):
    return [curves.Point(x, Interval(*raw, 0.961), 1.0, 1.0, {}) for x, raw in stretch]


@pytest.mark.parametrize(
    ("stretch", "expected"),
    [
        ([(32, FASTER), (4096, FASTER)],
         "재 본 범위 32–4,096 전체에서 빨라짐: 이 장치에서는 교차점이 없습니다."),
        ([(4096, SLOWER), (32, SLOWER)],
         "재 본 범위 32–4,096 전체에서 느려짐: 이 장치에서는 교차점이 없습니다."),
        ([(32, SAME), (4096, SAME)],
         "재 본 범위 32–4,096에서는 어느 크기에서도 구간 전체가 ±5% 밖으로 나가지 않아 교차점이 "
         "없습니다."),
        ([(32, SAME), (4096, HELD)],
         "재 본 범위 32–4,096에서는 어느 크기에서도 구간 전체가 ±5% 밖으로 나가지 않아 교차점이 "
         "없습니다."),
        ([(32, FASTER), (128, HELD), (4096, HELD)],
         "이 장치에서는 폭(d_model) 32까지는 빨라지고, 128부터는 판정을 보류합니다(재 본 범위 "
         "32–4,096)."),
        ([(32, SAME), (128, SLOWER), (4096, SLOWER)],
         "이 장치에서는 폭(d_model) 32–128 사이에서 판정이 바뀌어 128부터 느려집니다(재 본 범위 "
         "32–4,096)."),
        ([(32, FASTER), (128, SAME), (4096, SAME)],
         "이 장치에서는 폭(d_model) 32까지는 빨라지고, 128부터는 차이가 없습니다(재 본 범위 "
         "32–4,096)."),
        ([(32, SLOWER), (128, SAME), (4096, SAME)],
         "이 장치에서는 폭(d_model) 32까지는 느려지고, 128부터는 차이가 없습니다(재 본 범위 "
         "32–4,096)."),
        ([(32, SLOWER), (128, FASTER), (4096, SAME)],
         "이 장치에서는 판정이 크기를 따라 오르내립니다: 폭(d_model) 32에서는 느려지고, 128에서는 "
         "빨라지고, 4,096에서는 차이가 없습니다(재 본 범위 32–4,096)."),
        ([(8, FASTER), (16, SLOWER), (32, FASTER)],
         "이 장치에서는 판정이 크기를 따라 오르내립니다: 폭(d_model) 8에서는 빨라지고, 16에서는 "
         "느려지고, 32에서는 빨라집니다(재 본 범위 8–32)."),
    ],
)  # fmt: skip
def test_each_kind_of_sweep_sentence_is_exact(stretch, expected):
    assert curve_sentences.sweep_sentence(WIDTH, points(*stretch)) == expected


WORKERS = registry.BreakEven(
    "워커 띄우기", cost="a", cost_metric="one_time_s", baseline="b", variant="c", unit="배치"
)


@pytest.mark.parametrize(
    ("cost_s", "saving_s", "steps", "expected"),
    [
        (0.5, 0.01, 50.0, "워커 띄우기: 한 번 드는 비용 500 ms, 배치마다 10 ms 절약 → "
                          "50배치째부터 본전입니다."),
        # 본전은 셀 수 있는 단위입니다: 1.5배치가 아니라 2배치째(이슈 41의 "7.13배치").
        (0.5, 0.01, 1.5, "워커 띄우기: 한 번 드는 비용 500 ms, 배치마다 10 ms 절약 → "
                         "2배치째부터 본전입니다."),
        (1e-9, 1.0, 1e-9, "워커 띄우기: 한 번 드는 비용 1 ns, 배치마다 1 s 절약 → 1배치째부터 "
                          "본전입니다."),
        (2.0, None, None, "워커 띄우기: 한 번 드는 비용 2 s. 배치 시간이 구간 안에서 줄지 않아 "
                          "본전을 찾지 못합니다."),
    ],
)  # fmt: skip
def test_a_break_even_sentence_is_exact(cost_s, saving_s, steps, expected):
    result = analysis.BreakEvenResult(WORKERS, cost_s, saving_s, steps)
    assert curve_sentences.break_even_sentence(result) == expected
