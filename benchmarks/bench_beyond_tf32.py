"""더 나아가기 4 벤치마크: fp32 행렬 곱과 합성곱을 IEEE fp32와 TF32로 잽니다(CUDA 전용).

행렬 곱 크기는 PyTorch CUDA 노트가 A100에서 보인 예(10240²)와 같습니다. 천장은 같은 크기의 bf16
행렬 곱입니다: 텐서 코어가 내는 처리량의 기준입니다. CPU에는 TF32가 없어 재지 않습니다.
"""

import pytest
import torch

from measuring import ceilings
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
def test_matmul(compare, bench_device, size_key):
    skip_without_cuda(bench_device, size_key)
    n = SIZES[size_key]["n"]
    (a, b), _ = bt.make_inputs(bench_device, n=n, channels=1, size=1, batch_size=1)
    before = bt.fp32_settings()
    group = compare("matmul", params={"n": n}, per_call={"flops": 2 * n**3})
    group.add("matmul-ieee", bt.matmul_ieee, a, b, role="baseline", ceiling="matmul-bf16")
    group.add("matmul-tf32", bt.matmul_tf32, a, b, role="recommended", ceiling="matmul-bf16")
    for product in group.run().values():
        assert product.shape == (n, n)
    assert bt.fp32_settings() == before


@pytest.mark.measures("conv")
def test_conv(compare, bench_device, size_key):
    skip_without_cuda(bench_device, size_key)
    batch_size, channels, size = SIZES[size_key]["conv"]
    _, (x, weight) = bt.make_inputs(bench_device, 1, channels, size, batch_size)
    # 3×3 합성곱: 출력 원소마다 입력 채널 × 9번 곱하고 더합니다.
    flops = 2 * batch_size * channels * size * size * channels * 9
    group = compare("conv", params={"batch_size": batch_size, "channels": channels, "size": size},
                    per_call={"flops": flops})  # fmt: skip
    group.add("conv-ieee", bt.conv_ieee, x, weight, role="baseline")
    group.add("conv-tf32", bt.conv_tf32, x, weight, role="recommended")
    for out in group.run().values():
        assert out.shape == x.shape


@pytest.mark.measures("ceiling")
def test_bf16_matmul_ceiling(compare, bench_device, size_key):
    skip_without_cuda(bench_device, size_key)
    group = compare("ceiling")
    ceilings.add_matmul(group, "matmul-bf16", SIZES[size_key]["n"], torch.bfloat16, bench_device)
    group.run()


# CPU의 짝(PyTorch 2.9부터): oneDNN이 fp32 행렬 곱을 속으로 bf16으로 계산합니다. bf16 명령
# (AVX512-BF16, AMX)이 있는 CPU에서만 뜻이 있습니다. 크기는 2048²(연산 17 GFLOP, CPU에서 수십 ms).
CPU_MATMUL_N = {"quick": 64, "cpu": 2048, "cuda": 2048}
NO_CPU_BF16 = (
    '이 CPU에는 bf16 행렬 곱 명령(AVX512-BF16, AMX)이 없어 fp32_precision="bf16"이 이 CPU에서는 '
    "아무것도 바꾸지 않습니다."
)


# 스윕의 크기: 행렬 곱 한 번이 수 µs인 64에서 수십 ms인 2048까지(한 라운드는 반복으로 20 ms 이상).
CPU_SWEEP_N = {"quick": [16, 32], "cpu": [64, 128, 256, 512, 1024, 2048]}
CPU_SWEEP_N["cuda"] = CPU_SWEEP_N["cpu"]  # GPU 기계에서도 이 스윕은 CPU 텐서로 잽니다


@pytest.mark.sweep("cpu-size")
def test_cpu_bf16_size_sweep(sweep, size_key):
    if size_key != "quick" and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        pytest.skip(NO_CPU_BF16)
    run = sweep("cpu-size")
    for n in CPU_SWEEP_N[size_key]:
        a, b = torch.randn(n, n), torch.randn(n, n)
        ieee, bf16 = run.point(n, (bt.matmul_cpu_ieee, a, b), (bt.matmul_cpu_bf16, a, b))
        assert ieee.shape == bf16.shape == (n, n)


@pytest.mark.measures("cpu-bf16")
def test_cpu_bf16_matmul(compare, size_key):
    if size_key != "quick" and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        pytest.skip(NO_CPU_BF16)
    n = CPU_MATMUL_N[size_key]
    a, b = torch.randn(n, n), torch.randn(n, n)
    group = compare("cpu-bf16", params={"n": n}, per_call={"flops": 2 * n**3})
    group.add("cpu-ieee", bt.matmul_cpu_ieee, a, b, role="baseline")
    group.add("cpu-bf16", bt.matmul_cpu_bf16, a, b, role="recommended")
    for product in group.run().values():
        assert product.shape == (n, n)
