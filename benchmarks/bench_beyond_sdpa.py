"""더 나아가기 5 벤치마크: 인과 어텐션 한 번의 순전파+역전파를 손으로 쓴 코드와 SDPA로 잽니다.

SDPA는 세 가지로 잽니다: is_causal=True(권장), 같은 마스크를 텐서로 넘긴 것, math 커널을 강제한
것. 각 SDPA가 실제로 고른 커널은 시간 밖에서 한 번 확인해 이름(params의 kernel)에 넣습니다.
연산 수는 인과 마스크로 건너뛰는 절반도 세는 행렬 곱 FLOP이고, 천장은 같은 실행에서 잰 같은
dtype의 큰 행렬 곱입니다. GPU는 flash 커널이 받는 bf16, CPU는 fp32로 잽니다.
"""

import pytest
import torch
from torch.nn.attention import SDPBackend

from measuring import ceilings
from snippets import beyond_sdpa as sdpa

PAGE = "sdpa"

# (배치, 헤드, 길이, 헤드 차원)과 dtype. GPU의 손으로 쓴 어텐션은 점수 행렬만 1 GiB입니다.
SIZES = {
    "cuda": {"batch": 8, "heads": 16, "seq_len": 2048, "head_dim": 64, "dtype": "bf16"},
    "cpu": {"batch": 2, "heads": 8, "seq_len": 512, "head_dim": 64, "dtype": "fp32"},
    "quick": {"batch": 1, "heads": 2, "seq_len": 32, "head_dim": 16, "dtype": "fp32"},
}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# 천장 행렬 곱의 크기 n(n×n @ n×n).
MATMUL_SIZES = {"cuda": 8192, "cpu": 1024, "quick": 64}


def attention_flops(batch, heads, seq_len, head_dim):
    """순전파+역전파의 행렬 곱 연산 수. 인과 마스크로 건너뛰는 절반도 셉니다(FlopCounterMode와
    같은 값인지 tests/test_beyond_sdpa.py가 확인합니다): 순전파는 QKᵀ와 (점수)V 두 번의 곱(각
    2·B·H·T²·D), 역전파는 그 두 배입니다."""
    return 3 * 4 * batch * heads * seq_len**2 * head_dim


# 변형 key → (어텐션 함수, 역할)
VARIANTS = {
    "by-hand": (sdpa.attention_by_hand, "baseline"),
    "sdpa-causal": (sdpa.attention_sdpa, "recommended"),
    "sdpa-mask": (sdpa.attention_sdpa_with_mask, "other"),
    "sdpa-math": (sdpa.with_backend(SDPBackend.MATH, sdpa.attention_sdpa), "other"),
}


@pytest.mark.measures("fwd-bwd")
def test_attention(compare, bench_device, size_key):
    size = dict(SIZES[size_key])
    dtype_name = size.pop("dtype")
    q, k, v, grad_out = sdpa.make_inputs(bench_device, **size, dtype=DTYPES[dtype_name])
    group = compare("fwd-bwd", params={**size, "dtype": dtype_name},
                    per_call={"flops": attention_flops(**size)})  # fmt: skip
    for name, (attention, role) in VARIANTS.items():
        # 각 SDPA가 실제로 고른 커널은 시간 밖에서 한 번 확인해 이름에 넣습니다.
        kernel = {} if name == "by-hand" else {"kernel": sdpa.kernel_used(attention, q, k, v)}
        group.add(name, sdpa.forward_backward, attention, q, k, v, grad_out, role=role,
                  params=kernel, ceiling="matmul")  # fmt: skip
    for grads in group.run().values():
        assert [g.shape for g in grads] == [q.shape] * 3


@pytest.mark.measures("ceiling")
def test_matmul_ceiling(compare, bench_device, size_key):
    dtype_name = SIZES[size_key]["dtype"]
    group = compare("ceiling", params={"dtype": dtype_name})
    ceilings.add_matmul(group, "matmul", MATMUL_SIZES[size_key], DTYPES[dtype_name], bench_device)
    group.run()


# 스윕: 길이마다 SDPA(is_causal=True) 대 손으로 쓴 어텐션, 순전파+역전파. 헤드 4개, 헤드 차원 64.
# 크기(계산): 점수 행렬이 길이²라 손으로 쓴 쪽은 4·길이²·4바이트를 씁니다(길이 2048에서 64 MiB,
# GPU 8192에서 1 GiB). 연산은 약 4·길이²·64·4 ×3 FLOP(순전파+역전파)입니다.
SEQ_LENS = {
    "quick": [16],
    "cpu": [64, 128, 256, 512, 1024, 2048],
    "cuda": [512, 1024, 2048, 4096, 8192],
}


@pytest.mark.sweep("seq-len")
def test_seq_len_sweep(sweep, bench_device, size_key):
    dtype_name = SIZES[size_key]["dtype"]
    run = sweep("seq-len")
    for seq_len in SEQ_LENS[size_key]:
        shape = {"batch": 1, "heads": 4, "seq_len": seq_len, "head_dim": 64}
        q, k, v, grad_out = sdpa.make_inputs(bench_device, **shape, dtype=DTYPES[dtype_name])
        kernel = sdpa.kernel_used(sdpa.attention_sdpa, q, k, v)
        grads = run.point(
            seq_len,
            (sdpa.forward_backward, sdpa.attention_by_hand, q, k, v, grad_out),
            (sdpa.forward_backward, sdpa.attention_sdpa, q, k, v, grad_out),
            params={"heads": 4, "head_dim": 64, "dtype": dtype_name, "kernel": kernel},
        )
        assert all(len(g) == 3 for g in grads)
