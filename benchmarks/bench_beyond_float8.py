"""더 나아가기 벤치마크: bf16 학습 스텝 vs torchao float8 학습 스텝(둘 다 torch.compile).

크기 두 가지를 잽니다. small은 행렬이 작아 float8로 바꾸는 비용이 이득보다 큰 크기, large는
행렬 곱이 스텝의 대부분을 차지하는 크기입니다. 천장은 같은 실행에서 잰 bf16 행렬 곱의 TFLOP/s
입니다. float8 스텝의 TFLOP/s가 이 천장을 넘으면 float8 텐서 코어의 이득이 보이는 것입니다.

GPU 전용입니다. CPU에서는 float8 행렬 곱을 흉내만 내므로 재지 않습니다. 컴파일 시간은 재는
시간에 넣지 않고(워밍업에서 끝남) compile_s로 따로 남깁니다.
"""

import time

import pytest
import torch

from measuring import ceilings
from snippets import beyond_float8 as f8

PAGE = "float8"

SIZES = {
    "quick": {"small": {"dim": 16, "hidden": 32, "tokens": 16}},
    "cpu": {},
    "cuda": {
        "small": {"dim": 512, "hidden": 2048, "tokens": 4096},
        "large": {"dim": 4096, "hidden": 16384, "tokens": 16384},
    },
}
CEILING_N = {"quick": 64, "cpu": 0, "cuda": 8192}


def skip_reason(device):
    reason = f8.float8_support(device)
    if reason and device.type != "cuda":
        return f"GPU 전용이라 재지 않았습니다. {reason}"
    return reason


def size_cases():
    """크기마다 묶음이 따로 있어, 건너뛸 때도 어느 묶음을 재지 못했는지 남깁니다."""
    return [
        pytest.param(size, marks=pytest.mark.measures(f"step-{size}"))
        for size in ("small", "large")
    ]


@pytest.mark.parametrize("size", size_cases())
def test_step(compare, bench_device, size_key, size):
    reason = skip_reason(bench_device)
    if reason:
        pytest.skip(reason)
    config = SIZES[size_key].get(size)
    if config is None:
        pytest.skip("이 크기는 작은 입력 실행(quick)에서는 돌리지 않습니다.")
    group = compare(f"step-{size}", params=config)
    x = f8.make_inputs(config["tokens"], config["dim"]).to(bench_device)
    for variant, wrap, role in (("bf16", f8.bf16_model, "baseline"),
                                ("float8", f8.float8_model, "recommended")):  # fmt: skip
        model = f8.make_model(config["dim"], config["hidden"]).to(bench_device)
        flops = f8.linear_flops(model, config["tokens"])
        model = wrap(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        started = time.perf_counter()
        f8.train_step(model, optimizer, x)  # 첫 호출에서 컴파일합니다.
        torch.cuda.synchronize()
        group.add(variant, f8.train_step, model, optimizer, x, key=f"{size}-{variant}", role=role,
                  per_call={"flops": flops, "tokens": config["tokens"], "steps": 1},
                  metrics={"compile_s": time.perf_counter() - started},
                  ceiling="matmul-bf16")  # fmt: skip
    for loss in group.run().values():
        assert torch.isfinite(loss)
    torch._dynamo.reset()  # 다음 크기의 컴파일이 앞의 캐시와 섞이지 않게 합니다.


@pytest.mark.measures("ceiling")
def test_bf16_matmul_ceiling(compare, bench_device, size_key):
    reason = skip_reason(bench_device)
    if reason:
        pytest.skip(reason)
    group = compare("ceiling")
    ceilings.add_matmul(group, "matmul-bf16", CEILING_N[size_key], torch.bfloat16, bench_device)
    group.run()


# 스윕(GPU): 행렬 크기에 따라 float8 대 bf16(둘 다 컴파일). 토큰 4·d, 은닉 4·d라서 스텝의 연산은
# 약 6·(4d)·(2·d·4d)·2층 = 384·d³ FLOP입니다. d=4096이면 약 26 TFLOP, H200에서 수십 ms입니다.
DIMS = {"quick": [16], "cuda": [512, 1024, 2048, 4096]}


@pytest.mark.sweep("size")
def test_size_sweep(sweep, bench_device, size_key):
    reason = skip_reason(bench_device)
    if reason:
        pytest.skip(reason)
    run = sweep("size")
    for dim in DIMS[size_key]:
        tokens, hidden = 4 * dim, 4 * dim
        x = f8.make_inputs(tokens, dim).to(bench_device)
        sides = []
        for wrap in (f8.bf16_model, f8.float8_model):
            model = wrap(f8.make_model(dim, hidden).to(bench_device))
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
            f8.train_step(model, optimizer, x)  # 첫 호출에서 컴파일합니다.
            sides.append((f8.train_step, model, optimizer, x))
        run.point(dim, *sides, params={"hidden": hidden, "tokens": tokens})
        torch._dynamo.reset()
