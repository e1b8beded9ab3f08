"""더 나아가기 8 벤치마크: 학습 한 스텝을 체크포인팅 없이, 블록 하나 걸러, 블록마다 잽니다.

시간은 순전파+역전파 한 스텝입니다. 메모리는 시간 밖에서 한 번 잽니다: 역전파를 위해 저장한
활성값의 바이트(saved_tensors_hooks로 정확히 셈, 모든 장치)와, GPU에서는 스텝 하나의 최고 메모리
(torch.cuda.max_memory_allocated)입니다. 시간의 천장은 따로 없습니다: 체크포인팅 없는 스텝이
이 모델이 낼 수 있는 가장 빠른 스텝이고, 체크포인팅은 순전파를 한 번 더 하는 값을 치릅니다.
"""

import gc

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
    "every-block": (ck.forward_checkpointed, "recommended"),
}


@pytest.mark.measures("step")
@pytest.mark.parametrize("name", list(VARIANTS))
def test_train_step(measure, bench_device, size_key, name):
    size = dict(SIZES[size_key])
    dtype_name = size.pop("dtype")
    forward, role = VARIANTS[name]
    model, x, y = ck.make_inputs(bench_device, **size, dtype=DTYPES[dtype_name])
    metrics = {"saved_activation_mib": ck.saved_activation_bytes(model, forward, x, y) / 2**20}
    if bench_device.type == "cuda":
        gc.collect()  # 앞 변형의 모델이 남아 최고점에 섞이지 않게 합니다.
        ck.train_step(model, forward, x, y)  # 첫 스텝의 할당을 최고점에서 뺍니다.
        model.zero_grad(set_to_none=True)
        peak = ck.peak_memory_of(ck.train_step, model, forward, x, y)
        metrics["peak_memory_mib"] = peak / 2**20
    loss = measure(
        ck.train_step,
        model,
        forward,
        x,
        y,
        key=name,
        group="step",
        variant=name,
        role=role,
        params={**size, "dtype": dtype_name},
        per_call={"tokens": size["batch"] * size["seq_len"]},
        metrics=metrics,
    )
    assert torch.isfinite(loss)
