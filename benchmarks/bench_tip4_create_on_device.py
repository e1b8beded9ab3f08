"""팁 4 벤치마크: CPU에서 만들어 복사하기 vs 장치에서 바로 만들기(rand, zeros, arange).

천장은 같은 실행에서 잰 장치 안 복사(읽기+쓰기)의 대역폭입니다.
"""

import pytest

from measuring import ceilings
from snippets import tip4_create_on_device as tip4

PAGE = "tip4"

# 원소 수. GPU에서는 float32 256 MiB로 L2 캐시보다 훨씬 크게 잡아 메모리 대역폭을 잽니다.
SIZES = {"cuda": 1 << 26, "cpu": 1 << 24, "quick": 1 << 12}

# 묶음 → (느린 방식, 빠른 방식, 원소 하나의 바이트 수: arange는 int64입니다)
PAIRS = {
    "rand": (tip4.rand_then_copy, tip4.rand_on_device, 4),
    "zeros": (tip4.zeros_then_copy, tip4.zeros_on_device, 4),
    "arange": (tip4.arange_then_copy, tip4.arange_on_device, 8),
}


@pytest.mark.measures(*PAIRS)
@pytest.mark.parametrize("kind", list(PAIRS))
def test_create(compare, bench_device, size_key, kind):
    slow, fast, itemsize = PAIRS[kind]
    size = SIZES[size_key]
    args = tip4.make_inputs(kind, bench_device, size=size)
    group = compare(
        kind, params={"mib": round(size * itemsize / 2**20, 3)}, per_call={"bytes": size * itemsize}
    )
    group.add("create-then-copy", slow, *args, key=f"{kind}-create-then-copy", role="baseline")
    group.add("create-on-device", fast, *args, key=f"{kind}-create-on-device",
              role="recommended", ceiling="device-copy")  # fmt: skip
    for created in group.run().values():
        assert created.device.type == bench_device.type and created.numel() == size


@pytest.mark.measures("ceiling")
def test_device_copy_ceiling(compare, bench_device, size_key):
    group = compare("ceiling")
    ceilings.add_copy(group, "device-copy", SIZES[size_key], bench_device)
    assert list(group.run()) == ["device-copy"]
