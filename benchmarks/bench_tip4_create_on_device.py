"""팁 4 벤치마크: CPU에서 만들어 복사하기 vs 장치에서 바로 만들기.

천장은 같은 실행에서 잰 장치 안 복사(device-to-device) 대역폭입니다. 빠른 방식은 텐서를 한 번
쓰기만 하므로, 쓴 바이트를 시간으로 나눈 값이 메모리 대역폭에 얼마나 가까운지 봅니다.
"""

import pytest
import torch

from snippets import tip4_create_on_device as tip4

PAGE = "tip4"

# 원소 수. GPU에서는 float32 256 MiB로 L2 캐시보다 훨씬 크게 잡아 메모리 대역폭을 잽니다.
SIZES = {"cuda": 1 << 26, "cpu": 1 << 24, "quick": 1 << 12}

# 짝 이름 → (느린 방식, 빠른 방식, 원소 하나의 바이트 수: arange는 int64입니다)
PAIRS = {
    "rand": (tip4.rand_then_copy, tip4.rand_on_device, 4),
    "zeros": (tip4.zeros_then_copy, tip4.zeros_on_device, 4),
    "arange": (tip4.arange_then_copy, tip4.arange_on_device, 8),
}


# 같은 짝의 느린 방식과 빠른 방식을 연달아 잽니다. 사이에 시간이 벌어지면 기계 상태가 바뀐 만큼
# 비교가 흔들립니다.
@pytest.mark.measures("rand")
@pytest.mark.parametrize(
    ("kind", "role"), [(kind, role) for kind in PAIRS for role in ("baseline", "recommended")]
)
def test_create(measure, bench_device, size_key, kind, role):
    slow, fast, itemsize = PAIRS[kind]
    fn = slow if role == "baseline" else fast
    size = SIZES[size_key]
    args = tip4.make_inputs(kind, bench_device, size=size)
    variant = "create-then-copy" if role == "baseline" else "create-on-device"
    created = measure(
        fn,
        *args,
        key=f"{kind}-{variant}",
        group=kind,
        variant=variant,
        role=role,
        params={"mib": round(size * itemsize / 2**20, 3)},
        per_call={"bytes": size * itemsize},
        ceiling="device-copy" if role == "recommended" else None,
    )
    assert created.device.type == bench_device.type


@pytest.mark.measures("ceiling")
def test_device_copy_ceiling(measure, bench_device, size_key):
    source = torch.rand(SIZES[size_key], device=bench_device)
    target = torch.empty_like(source)
    measure(
        target.copy_,
        source,
        key="device-copy",
        group="ceiling",
        variant="device-copy",
        role="ceiling",
        per_call={"bytes": 2 * source.nbytes},
    )
