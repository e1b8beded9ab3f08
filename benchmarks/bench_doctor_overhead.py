"""내 학습 진단하기 벤치마크: 진단기의 시간 창이 작은 학습 스텝에 더하는 비용.

호출 한 번이 스니펫의 학습 스텝 `steps`개를 돕니다. 기준은 진단기 없이, 다른 변형은 같은 스텝을
torchdoctor의 시간 창 안에서(창을 여닫는 일까지 호출마다) 돕니다. 이슈의 목표는 5% 안입니다.
두 설정은 같은 시드로 만들어 같은 계산을 합니다(tests/test_doctor_overhead.py).
"""

import pytest

from snippets import doctor_overhead as overhead

PAGE = "doctor"

SIZES = {
    "cuda": {"steps": 20, "layers": 4, "width": 1024, "batch": 256},
    "cpu": {"steps": 20, "layers": 4, "width": 256, "batch": 64},
    "quick": {"steps": 3, "layers": 1, "width": 8, "batch": 2},
}
VARIANTS = {
    "plain": ("baseline", overhead.train_steps),
    "timed-window": ("other", overhead.train_steps_in_timed_window),
}


@pytest.mark.measures("overhead")
def test_overhead(compare, bench_device, size_key):
    size = SIZES[size_key]
    params = {"steps": size["steps"], "width": size["width"], "batch": size["batch"]}
    group = compare("overhead", params=params, per_call={"steps": size["steps"]})
    for variant, (role, fn) in VARIANTS.items():
        group.add(variant, fn, *overhead.make_setup(bench_device, **size), role=role)
    losses = group.run()
    assert losses["plain"].shape == losses["timed-window"].shape == (size["steps"],)
