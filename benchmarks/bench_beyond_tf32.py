"""더 나아가기 4 벤치마크: fp32 행렬 곱과 합성곱을 IEEE fp32와 TF32로 잽니다(CUDA 전용).

행렬 곱 크기는 PyTorch CUDA 노트가 A100에서 보인 예(10240²)와 같습니다. 천장은 같은 크기의 bf16
행렬 곱입니다: 텐서 코어가 내는 처리량의 기준입니다. CPU에는 TF32가 없어 재지 않습니다.
"""

import pytest
import torch

from snippets import beyond_tf32 as bt

PAGE = "tf32"

# 행렬 곱 n, 합성곱 (배치, 채널, 높이·너비)
SIZES = {
    "quick": {"n": 64, "conv": (2, 8, 8)},
    "cpu": {"n": 64, "conv": (2, 8, 8)},
    "cuda": {"n": 10240, "conv": (64, 256, 56)},
}

NO_TF32_ON_CPU = (
    "CUDA GPU가 없어서 재지 않았습니다. TF32는 NVIDIA GPU(Ampere 이후)의 텐서 코어가 "
    "fp32 행렬 곱과 합성곱을 계산하는 방식이라, CPU에서는 두 설정이 똑같이 계산합니다."
)


def skip_without_cuda(device, size_key):
    # 평소 pytest(quick)에서는 CPU에서도 코드가 도는지만 봅니다. 시간을 잴 때는 GPU에서만 잽니다.
    if device.type != "cuda" and size_key != "quick":
        pytest.skip(NO_TF32_ON_CPU)


@pytest.mark.measures("matmul")
@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_matmul(measure, bench_device, size_key, precision):
    skip_without_cuda(bench_device, size_key)
    n = SIZES[size_key]["n"]
    (a, b), _ = bt.make_inputs(bench_device, n=n, channels=1, size=1, batch_size=1)
    fn = bt.matmul_ieee if precision == "ieee" else bt.matmul_tf32
    before = bt.fp32_settings()
    product = measure(
        fn,
        a,
        b,
        key=f"matmul-{precision}",
        group="matmul",
        variant=f"matmul-{precision}",
        role="baseline" if precision == "ieee" else "recommended",
        params={"n": n},
        per_call={"flops": 2 * n**3},
        ceiling="matmul-bf16",
    )
    assert product.shape == (n, n)
    assert bt.fp32_settings() == before


@pytest.mark.measures("conv")
@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_conv(measure, bench_device, size_key, precision):
    skip_without_cuda(bench_device, size_key)
    batch_size, channels, size = SIZES[size_key]["conv"]
    _, (x, weight) = bt.make_inputs(bench_device, 1, channels, size, batch_size)
    fn = bt.conv_ieee if precision == "ieee" else bt.conv_tf32
    out = measure(
        fn,
        x,
        weight,
        key=f"conv-{precision}",
        group="conv",
        variant=f"conv-{precision}",
        role="baseline" if precision == "ieee" else "recommended",
        params={"batch_size": batch_size, "channels": channels, "size": size},
        # 3×3 합성곱: 출력 원소마다 입력 채널 × 9번 곱하고 더합니다.
        per_call={"flops": 2 * batch_size * channels * size * size * channels * 9},
    )
    assert out.shape == x.shape


@pytest.mark.measures("ceiling")
def test_bf16_matmul_ceiling(measure, bench_device, size_key):
    skip_without_cuda(bench_device, size_key)
    n = SIZES[size_key]["n"]
    a = torch.randn(n, n, device=bench_device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=bench_device, dtype=torch.bfloat16)
    measure(
        torch.matmul,
        a,
        b,
        key="matmul-bf16",
        group="ceiling",
        variant="matmul-bf16",
        role="ceiling",
        params={"n": n},
        per_call={"flops": 2 * n**3},
    )
