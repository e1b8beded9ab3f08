"""더 나아가기 8 벤치마크: 학습 한 스텝을 체크포인팅 없이, 블록 하나 걸러, 블록마다 잽니다.

시간은 순전파+역전파 한 스텝입니다. 메모리는 시간 밖에서 셉니다: 역전파를 위해 저장한 활성값의
바이트(saved_tensors_hooks로 정확히 셈)와 스텝 하나의 최대 메모리 증가(measuring/memory.py).
시간의 천장은 따로 없습니다: 체크포인팅은 순전파를 한 번 더 하는 값을 치릅니다.
"""

import functools

import pytest
import torch

from snippets import beyond_checkpointing as ck

PAGE = "checkpointing"

# 모델과 배치 크기. GPU는 bf16으로 블록 12개의 활성값이 수 GiB가 되게 잡습니다.
SIZES = {
    "cuda": {"d_model": 1024, "num_blocks": 12, "batch": 16, "seq_len": 1024, "dtype": "bf16"},
    "cpu": {"d_model": 128, "num_blocks": 4, "batch": 8, "seq_len": 128, "dtype": "fp32"},
    "quick": {"d_model": 16, "num_blocks": 2, "batch": 2, "seq_len": 8, "dtype": "fp32"},
}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}

# 변형 key → (순전파 함수, 역할)
VARIANTS = {
    "no-checkpoint": (ck.forward_plain, "baseline"),
    "every-other-block": (lambda blocks, x: ck.forward_checkpointed(blocks, x, every=2), "other"),
    # 시간을 내주고 메모리를 얻는 기법이라 "권장 방식"이 아니라 "비교"입니다.
    "every-block": (ck.forward_checkpointed, "other"),
}


@pytest.mark.measures("step")
def test_train_step(compare, bench_device, size_key):
    size = dict(SIZES[size_key])
    dtype_name = size.pop("dtype")
    group = compare("step", params={**size, "dtype": dtype_name},
                    per_call={"tokens": size["batch"] * size["seq_len"]})  # fmt: skip
    for name, (forward, role) in VARIANTS.items():
        model, x, y = ck.make_inputs(bench_device, **size, dtype=DTYPES[dtype_name])
        saved = (
            ck.saved_activation_bytes(model, functools.partial(ck.loss_of, model, forward, x, y))
            / 2**20
        )
        ck.train_step(model, forward, x, y)  # 첫 스텝의 변화도 할당을 최고 메모리에서 뺍니다.
        group.add(name, ck.train_step, model, forward, x, y, role=role,
                  metrics={"saved_activation_mib": saved})  # fmt: skip
    for loss in group.run().values():
        assert torch.isfinite(loss)


# 스윕: 블록 수(깊이)에 따라 블록마다 체크포인팅 대 없음: 시간과 최대 메모리 증가를 함께 봅니다.
# 저장하는 활성값은 블록마다 배치·길이·d_model·(4배 MLP 포함 약 10개)·4바이트라 CPU 크기에서
# 블록 하나에 약 10 MiB, 64블록이면 약 640 MiB입니다.
DEPTHS = {"quick": [1], "cpu": [2, 4, 8, 16, 32, 64], "cuda": [4, 8, 16, 32, 64]}


@pytest.mark.sweep("depth")
def test_depth_sweep(sweep, bench_device, size_key):
    size = dict(SIZES[size_key])
    dtype_name = size.pop("dtype")
    size.pop("num_blocks")
    run = sweep("depth")
    for blocks in DEPTHS[size_key]:
        sides = []
        for name in ("no-checkpoint", "every-block"):
            forward, _ = VARIANTS[name]
            model, x, y = ck.make_inputs(bench_device, **size, num_blocks=blocks,
                                         dtype=DTYPES[dtype_name])  # fmt: skip
            ck.train_step(model, forward, x, y)  # 첫 스텝의 변화도 할당을 최대 메모리에서 뺍니다.
            sides.append((ck.train_step, model, forward, x, y))
        losses = run.point(blocks, *sides, params={**size, "dtype": dtype_name})
        assert all(torch.isfinite(loss) for loss in losses)
