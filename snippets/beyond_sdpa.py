"""더 나아가기 5: 손으로 쓴 어텐션 대신 `F.scaled_dot_product_attention`(SDPA)을 씁니다.

같은 인과(causal) 어텐션을 손으로 쓴 코드와 SDPA로 계산하고, SDPA가 어떤 커널을 골랐는지
역전파 노드의 이름으로 확인합니다.

실행: `python snippets/beyond_sdpa.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:slow]
def attention_by_hand(q, k, v):
    """손으로 쓴 인과 어텐션입니다(느린 방식). 모양은 (배치, 헤드, 길이, 헤드 차원)입니다.

    (길이 × 길이) 점수 행렬을 통째로 메모리에 만들고, 마스크, 소프트맥스, 곱을 따로따로
    계산합니다. 역전파를 위해 중간 행렬도 여러 개 저장합니다.
    """
    seq_len = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~causal, float("-inf"))  # 미래 토큰은 보지 못하게 합니다.
    return torch.softmax(scores, dim=-1) @ v


# --8<-- [end:slow]


# --8<-- [start:fast]
def attention_sdpa(q, k, v):
    """같은 계산을 SDPA 한 줄로 합니다(빠른 방식). is_causal=True면 마스크 텐서가 필요 없습니다.

    is_causal=True는 q와 k의 길이가 같을 때(학습의 셀프 어텐션)만 맞습니다. 길이가 다르면
    아래 attention_with_cache를 씁니다.
    """
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# --8<-- [end:fast]


# --8<-- [start:kv_cache]
def attention_with_cache(q, k, v):
    """q가 k, v보다 짧을 때(KV 캐시 디코딩, 청크 단위 프리필)의 인과 어텐션입니다.

    새 토큰들은 캐시의 끝에 있으므로 마스크를 오른쪽 아래에 맞춥니다. is_causal=True는 마스크를
    왼쪽 위에 맞춰서, 길이가 다르면 오류 없이 틀린 답을 냅니다.
    """
    mask = causal_lower_right(q.size(-2), k.size(-2))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


# --8<-- [end:kv_cache]


# --8<-- [start:mask]
def attention_sdpa_with_mask(q, k, v):
    """결과는 같지만 인과 마스크를 텐서로 넘깁니다. GPU에서는 이것만으로 flash 커널을 못 씁니다."""
    seq_len = q.size(-2)
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=causal)


# --8<-- [end:mask]


# --8<-- [start:kernel]
# 역전파 노드 이름에 든 글자 → 커널 이름. 어느 것도 없으면 math(여러 연산으로 나눈 계산)입니다.
KERNELS = {
    "FlashAttentionForCpu": "flash-cpu",
    "FlashAttention": "flash",
    "EfficientAttention": "memory-efficient",
    "CudnnAttention": "cudnn",
}


def kernel_used(attention, q, k, v):
    """attention(q, k, v)가 실제로 어떤 SDPA 커널로 계산됐는지 돌려줍니다.

    융합(fused) 커널은 역전파 노드 하나(`ScaledDotProduct...Backward0`)를 남기고, math는 행렬 곱과
    소프트맥스 같은 평범한 연산의 노드를 남깁니다. 그래서 출력의 grad_fn 이름을 봅니다.
    """
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    node = attention(q, k, v).grad_fn.name()
    for marker, name in KERNELS.items():
        if marker in node:
            return name
    return "math"


def kernel_priority():
    """SDPA가 커널을 시험하는 기본 순서입니다. 입력이 조건에 맞는 첫 커널을 씁니다."""
    return [SDPBackend(i).name for i in torch._C._get_sdp_priority_order()]


def with_backend(backend, attention):
    """SDPA가 backend 커널만 쓰도록 묶은 attention을 돌려줍니다. 못 쓰면 RuntimeError가 납니다."""

    def forced(q, k, v):
        with sdpa_kernel(backend):
            return attention(q, k, v)

    return forced


# --8<-- [end:kernel]


# --8<-- [start:train]
def forward_backward(attention, q, k, v, grad_out):
    """어텐션 한 번의 순전파와 역전파입니다. 변화도를 누적하지 않고 돌려줍니다."""
    out = attention(q, k, v)
    return torch.autograd.grad(out, (q, k, v), grad_out)


# --8<-- [end:train]


def make_inputs(device, batch=2, heads=4, seq_len=128, head_dim=32, dtype=torch.float32, seed=0):
    """장치에서 바로 q, k, v와 출력의 변화도(grad_out)를 만듭니다. 같은 seed면 같은 값입니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (batch, heads, seq_len, head_dim)
    q, k, v, grad_out = (
        torch.randn(shape, device=device, dtype=dtype, generator=g) for _ in range(4)
    )
    return q.requires_grad_(), k.requires_grad_(), v.requires_grad_(), grad_out


def main(device="cpu"):
    device = torch.device(device)
    # GPU의 flash 커널은 fp16/bf16만 받으므로 GPU에서는 bf16으로 잽니다.
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    seq_len = 1024 if device.type == "cuda" else 256
    q, k, v, grad_out = make_inputs(device, batch=4, heads=8, seq_len=seq_len, dtype=dtype)
    print(f"장치: {device}, dtype: {dtype}, 모양(배치, 헤드, 길이, 헤드 차원): {tuple(q.shape)}")
    print(f"커널을 시험하는 기본 순서: {' → '.join(kernel_priority())}")
    variants = {
        "손으로 쓴 어텐션": attention_by_hand,
        "SDPA is_causal=True": attention_sdpa,
        "SDPA attn_mask=텐서": attention_sdpa_with_mask,
        "SDPA math 커널 강제": with_backend(SDPBackend.MATH, attention_sdpa),
    }
    base_s = None
    for label, attention in variants.items():
        timer = Timer(
            "f(a, q, k, v, g)",
            globals={"f": forward_backward, "a": attention, "q": q, "k": k, "v": v, "g": grad_out},
        )
        seconds = timer.blocked_autorange(min_run_time=0.3).median
        base_s = base_s or seconds
        kernel = (
            "" if attention is attention_by_hand else f", 커널: {kernel_used(attention, q, k, v)}"
        )
        print(
            f"{label}: 순전파+역전파 {seconds * 1e3:.2f} ms "
            f"(손으로 쓴 것 대비 {base_s / seconds:.2f}배){kernel}"
        )
    with torch.no_grad():
        full = attention_sdpa(q, k, v)[..., -1:, :]
        new_token = q[..., -1:, :]  # KV 캐시로 마지막 토큰 하나만 계산합니다.
        cached = (attention_with_cache(new_token, k, v) - full).abs().max().item()
        causal = (attention_sdpa(new_token, k, v) - full).abs().max().item()
    print(
        f"새 토큰 하나(KV 캐시): causal_lower_right와 전체 계산의 차이 {cached:.1e}, "
        f"is_causal=True와의 차이 {causal:.1e}(틀린 답)"
    )
    try:
        with_backend(SDPBackend.FLASH_ATTENTION, attention_sdpa_with_mask)(q, k, v)
        print("flash 커널만 허용해도 attn_mask가 있는 호출이 실행됩니다.")
        print("CPU의 flash 커널은 마스크를 받기 때문입니다. GPU의 flash 커널은 받지 않습니다.")
    except RuntimeError:
        print("flash 커널만 허용하면 attn_mask가 있는 호출은 실패합니다.")
        print("이 장치의 flash 커널은 임의의 마스크를 받지 않습니다.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 5: scaled_dot_product_attention"))
