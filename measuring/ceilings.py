"""여러 페이지가 같은 실행에서 재는 천장: 큰 행렬 곱(연산 속도)과 장치 안 복사(대역폭).

천장은 "이 장치에서 도달할 수 있는 최대 속도"를 같은 실행에서 잰 값입니다. 측정 방법이 한
곳에 있어야 페이지마다 같은 뜻이 됩니다.
"""

from __future__ import annotations

import torch

from results_format import provenance

# bf16 행렬 곱을 하드웨어로 계산하는 CPU 명령. 없으면 torch가 흉내 내는 경로로 계산해서, 2코어에서
# 2048³ 행렬 곱 한 번에 1분 가까이 걸립니다(천장이 아니라 바닥입니다).
CPU_BF16_MATMUL = {"avx512_bf16", "amx_bf16"}


def bf16_matmul_in_hardware(device: torch.device) -> bool:
    """CUDA GPU와 bf16 명령(AVX-512 BF16, AMX)이 있는 CPU에서만 bf16 행렬 곱이 천장이 됩니다."""
    return device.type == "cuda" or bool(CPU_BF16_MATMUL & set(provenance.cpu_flags()))


def tf32_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """TF32로 계산한 fp32 행렬 곱. 전역 설정은 호출이 끝나면 되돌립니다."""
    previous = torch.backends.cuda.matmul.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    try:
        return a @ b
    finally:
        torch.backends.cuda.matmul.fp32_precision = previous


def add_matmul(group, variant: str, n: int, dtype: torch.dtype, device, *, tf32=False, key=None):
    """n×n @ n×n 행렬 곱을 천장으로 더합니다. 0이 아닌 무작위 값을 씁니다(0은 더 빠를 수 있음)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    fn = tf32_matmul if tf32 else torch.matmul
    group.add(variant, fn, a, b, key=key, role="ceiling", params={"n": n},
              per_call={"flops": 2 * n**3})  # fmt: skip


def add_copy(group, variant: str, numel: int, device, *, key=None, params=None):
    """장치 안 복사(원본 읽기 + 대상 쓰기 = 2 × 바이트)를 천장으로 더합니다."""
    source = torch.rand(numel, device=device)
    target = torch.empty_like(source)
    group.add(variant, target.copy_, source, key=key, role="ceiling", params=params,
              per_call={"bytes": 2 * source.nbytes})  # fmt: skip
