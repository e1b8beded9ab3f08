"""더 나아가기 7 벤치마크: cudnn.benchmark를 켜고 끈 학습을 고정된 모양과 바뀌는 모양에서 잽니다.

- 고정된 모양: 같은 모양의 배치 여러 개. 켠 쪽의 알고리즘 탐색은 워밍업에서 끝납니다.
- 바뀌는 모양: 호출마다 처음 보는 높이·너비의 배치. 켠 쪽은 배치마다 알고리즘을 다시 잽니다.
  그래서 이 묶음에서는 켠 것을 기준으로, 끈 것(권장)이 얼마나 빠른지를 봅니다.

cuDNN은 NVIDIA GPU에만 있어서 CPU에서는 재지 않습니다. 합성곱 알고리즘마다 일의 양이 달라 같은
실행에서 잴 단순한 천장이 없습니다.
"""

import itertools
import time

import pytest
import torch

from snippets import beyond_cudnn_benchmark as cb

PAGE = "cudnn-benchmark"

SIZES = {
    "cuda": {"channels": 64, "num_layers": 4, "batch": 32, "size": 128, "steps": 5},
    # CPU에는 cuDNN이 없어 건너뜁니다. 크기 표의 모양을 맞추려고 작은 크기를 둡니다.
    "cpu": {"channels": 8, "num_layers": 2, "batch": 2, "size": 16, "steps": 2},
    "quick": {"channels": 8, "num_layers": 2, "batch": 2, "size": 16, "steps": 2},
}
# 바뀌는 모양: 켠 쪽은 새 모양마다 알고리즘을 재느라 호출이 길어서, 호출당 배치 수를 줄입니다.
CHANGING_STEPS = 3

NO_CUDNN = (
    "CUDA GPU가 없어서 재지 않았습니다. cudnn.benchmark는 NVIDIA cuDNN이 합성곱 알고리즘을 "
    "고르는 방식을 바꾸는 설정이라 CPU에서는 아무 일도 하지 않습니다."
)

# 변형 key → 학습 함수
STEPS = {"benchmark-off": cb.steps_default, "benchmark-on": cb.steps_benchmark}


def needs_cuda(bench_device):
    if bench_device.type != "cuda":
        pytest.skip(NO_CUDNN)


@pytest.mark.measures("fixed")
def test_fixed_shapes(compare, bench_device, size_key):
    needs_cuda(bench_device)
    size = SIZES[size_key]
    batches = cb.fixed_batches(bench_device, size["steps"], size["batch"], size["size"])
    group = compare("fixed", params=size, per_call={"steps": size["steps"]})
    for name, steps in STEPS.items():
        model = cb.make_inputs(bench_device, size["channels"], size["num_layers"])
        # 켠 쪽의 첫 호출은 알고리즘을 고르는 한 번의 비용입니다. 그 시간을 본전 계산에 남깁니다.
        started = time.perf_counter()
        steps(model, batches)
        torch.cuda.synchronize(bench_device)
        first = time.perf_counter() - started
        role = "recommended" if name == "benchmark-on" else "baseline"
        group.add(name, steps, model, batches, key=f"fixed-{name}", role=role,
                  metrics={"one_time_s": first})  # fmt: skip
    for outs in group.run().values():
        assert len(outs) == size["steps"]


@pytest.mark.measures("changing")
def test_changing_shapes(compare, bench_device, size_key):
    needs_cuda(bench_device)
    size = SIZES[size_key]
    steps = min(CHANGING_STEPS, size["steps"])
    group = compare("changing", params={**size, "steps": steps}, per_call={"steps": steps})
    for name, train in STEPS.items():
        model = cb.make_inputs(bench_device, size["channels"], size["num_layers"])
        # 두 변형이 같은 모양을 다시 보지 않도록 너비를 다르게 합니다(widen 1과 2).
        widen = 1 + list(STEPS).index(name)
        calls = itertools.count()

        def new_shapes(model=model, widen=widen, calls=calls, train=train):
            start = next(calls) * steps
            batches = cb.changing_batches(
                bench_device, steps, size["batch"], size["size"], start=start, widen=widen
            )
            return train(model, batches)

        role = "recommended" if name == "benchmark-off" else "baseline"
        group.add(name, new_shapes, key=f"changing-{name}", role=role)
    for outs in group.run().values():
        assert len(outs) == steps
