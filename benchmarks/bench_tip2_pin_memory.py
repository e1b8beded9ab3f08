"""팁 2 벤치마크: 페이지 가능 메모리 vs 고정 메모리에서 GPU로 복사하기.

CUDA GPU에서만 잽니다. 가속기가 없으면 고정할 수도, 복사할 장치도 없기 때문입니다. CPU에서는
모든 항목을 건너뛰고 그 이유를 한국어로 남깁니다.

- 배치 복사(헤드라인): 이미지 배치 하나를 페이지 가능 메모리에서 `copy_pageable`로, 미리 고정한
  배치를 `copy_pinned`로 보냅니다. 매번 `pin_batch`로 고정한 뒤 보내는 경우도 함께 잽니다.
  `copy_pinned`는 `non_blocking=True`라서 복사가 끝나기 전에 돌아오지만, GPU에서는 시계를 읽을
  때마다 CUDA를 동기화하므로(measuring/timing.py) 한 라운드에는 복사 전체가 들어갑니다.
- 천장: 약 1 GiB의 고정된 텐서를 미리 잡아 둔 GPU 텐서로 복사한 GB/s입니다. 호스트와 GPU 사이의
  연결(H200은 PCIe Gen5 ×16, 이론상 한 방향 64 GB/s)이 실제로 내는 속도입니다.
- 복사와 계산 겹치기: 고정된 배치들로 `train_one_epoch`(한 스트림) vs `train_with_prefetch`(복사
  전용 스트림)를 스텝/초로 비교합니다. DataLoader를 빼서 복사와 계산만 남깁니다.
- DataLoader 한 에폭: 페이지에 보이는 `make_loader` + `train_one_epoch`를 `pin_memory=False`와
  `True`로 돌립니다. 스니펫의 로더는 워커를 에폭마다 새로 띄우므로, 그 시간도 들어갑니다.
"""

import pytest
import torch
from torch import nn
from torch.utils.data import ConcatDataset, TensorDataset

from snippets import tip2_pin_memory as tip2

PAGE = "tip2"

# 배치 복사: GPU에서는 ImageNet 크기 이미지 256장(float32 147 MiB)으로, L2 캐시보다 훨씬 큽니다.
BATCH = {
    "cuda": {"batch_size": 256, "image_size": 224},
    "quick": {"batch_size": 4, "image_size": 16},
}
# 천장: float32 원소 수. GPU에서는 1 GiB라서 복사 한 번이 10 ms가 넘고 시작 비용이 묻힙니다.
CEILING_ELEMENTS = {"cuda": 1 << 28, "quick": 1 << 12}
# 학습 두 그룹의 배치 크기, 이미지 크기, 스텝 수. 겹치기 그룹은 고정된 배치를 스텝 수만큼 둡니다.
TRAINING = {
    "cuda": {"batch_size": 64, "image_size": 224, "overlap_steps": 16, "loader_steps": 64},
    "quick": {"batch_size": 2, "image_size": 16, "overlap_steps": 2, "loader_steps": 2},
}
NO_CUDA = "CUDA GPU가 없어서 재지 않았습니다. "
REASONS = {
    "copy": NO_CUDA + "고정 메모리는 CPU에서 GPU로 복사할 때만 의미가 있습니다.",
    "ceiling": NO_CUDA + "천장은 호스트와 GPU 사이 연결(PCIe)의 복사 속도입니다.",
    "overlap": NO_CUDA + "복사와 계산을 겹치려면 CUDA 스트림이 있어야 합니다.",
    "loader": NO_CUDA
    + "가속기가 없으면 DataLoader의 pin_memory=True는 경고만 내고 아무것도 고정하지 않습니다.",
}


def require_cuda(device, what):
    if device.type != "cuda":
        pytest.skip(REASONS[what])


def pin_then_copy(batch, device):
    """복사할 때마다 고정부터 하는 경우입니다. 고정 자체가 호스트 안의 복사 한 번입니다."""
    return tip2.copy_pinned(tip2.pin_batch(batch), device)


# 변형 → (역할, 복사 함수, 복사 전에 고정해 두는지)
COPIES = {
    "pageable-copy": ("baseline", tip2.copy_pageable, False),
    "pinned-copy": ("recommended", tip2.copy_pinned, True),
    "pin-then-copy": ("other", pin_then_copy, False),
}


@pytest.mark.measures("batch-copy")
def test_batch_copy(compare, bench_device, size_key):
    require_cuda(bench_device, "copy")
    pageable = tip2.make_batch(**BATCH[size_key])
    nbytes = sum(t.nbytes for t in pageable)
    group = compare("batch-copy", params={"mib": round(nbytes / 2**20)}, per_call={"bytes": nbytes})
    for variant, (role, copy, pinned) in COPIES.items():
        batch = tip2.pin_batch(pageable) if pinned else pageable
        group.add(variant, copy, batch, bench_device, role=role, ceiling="pinned-copy-ceiling")
    for copied in group.run().values():
        assert [t.device.type for t in copied] == ["cuda", "cuda"]
        assert [t.shape for t in copied] == [t.shape for t in pageable]


@pytest.mark.measures("ceiling")
def test_pinned_copy_ceiling(compare, bench_device, size_key):
    require_cuda(bench_device, "ceiling")
    # 값은 무작위로 채웁니다(0으로 채운 메모리는 실제 데이터와 다르게 빠를 수 있습니다).
    source = torch.rand(CEILING_ELEMENTS[size_key], pin_memory=True)
    target = torch.empty_like(source, device=bench_device)
    group = compare("ceiling", params={"gib": round(source.nbytes / 2**30, 3)},
                    per_call={"bytes": source.nbytes})  # fmt: skip
    # non_blocking=True: 고정된 원본에서 복사 엔진이 바로 읽습니다.
    group.add("pinned-copy-ceiling", target.copy_, source, True, role="ceiling")
    group.run()
    assert target.device.type == "cuda"


def make_model(device):
    """학습 그룹이 쓰는 작은 CNN: ResNet의 첫 합성곱 층과 분류 층입니다.

    스텝 하나의 GPU 계산이 배치 하나를 복사하는 시간과 비슷한 크기라서, 복사를 계산과 겹치면 얼마나
    빨라지는지가 드러납니다.
    """
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, 1000),
    ).to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


@pytest.mark.measures("overlap")
def test_overlap(compare, bench_device, size_key):
    require_cuda(bench_device, "overlap")
    size = TRAINING[size_key]
    steps = size["overlap_steps"]
    # DataLoader(pin_memory=True)가 주는 것과 같은, 고정된 배치 목록입니다. 배치마다 다른 값입니다.
    batches = [
        tip2.pin_batch(tip2.make_batch(size["batch_size"], size["image_size"]))
        for _ in range(steps)
    ]
    group = compare("overlap", params={"batch_size": size["batch_size"], "steps": steps},
                    per_call={"steps": steps})  # fmt: skip
    for variant, role, train in [
        ("copy-then-compute", "baseline", tip2.train_one_epoch),
        ("prefetch-on-stream", "recommended", tip2.train_with_prefetch),
    ]:
        model, optimizer = make_model(bench_device)
        group.add(variant, train, model, batches, optimizer, bench_device, role=role)
    for loss in group.run().values():
        assert loss.device.type == "cuda"


@pytest.mark.measures("loader")
def test_dataloader_epoch(compare, bench_device, size_key):
    require_cuda(bench_device, "loader")
    size = TRAINING[size_key]
    steps = size["loader_steps"]
    # 서로 다른 샘플 512개를 여러 번 이어 붙여 메모리를 아끼면서 에폭을 길게 만듭니다.
    # 샘플 하나를 꺼내 배치로 쌓는 일은 이어 붙여도 똑같습니다.
    distinct = min(512, steps * size["batch_size"])
    block = TensorDataset(*tip2.make_batch(distinct, size["image_size"]))
    dataset = ConcatDataset([block] * (steps * size["batch_size"] // distinct))
    assert len(dataset) == steps * size["batch_size"]
    group = compare("loader", params={"batch_size": size["batch_size"], "steps": steps},
                    per_call={"steps": steps})  # fmt: skip
    for pin_memory in (False, True):
        # 나머지 설정(워커 2개, shuffle)은 페이지에 보이는 make_loader의 기본값 그대로입니다.
        loader = tip2.make_loader(dataset, batch_size=size["batch_size"], pin_memory=pin_memory)
        model, optimizer = make_model(bench_device)
        variant = f"loader-{'pinned' if pin_memory else 'pageable'}"
        role = "recommended" if pin_memory else "baseline"
        group.add(variant, tip2.train_one_epoch, model, loader, optimizer, bench_device, role=role)
    for loss in group.run().values():
        assert loss.device.type == "cuda"


# 스윕(GPU): 배치 크기에 따라 고정 메모리 대 페이지 가능 메모리 복사. 64 KiB는 복사 시작 비용이,
# 1 GiB는 PCIe Gen5 ×16(한 방향 약 55 GB/s 실측)의 대역폭이 시간을 정합니다(약 20 ms).
TRANSFER_MIB = {"quick": [1], "cuda": [0.0625, 1, 16, 256, 1024]}


@pytest.mark.sweep("transfer")
def test_transfer_sweep(sweep, bench_device, size_key):
    require_cuda(bench_device, "copy")
    run = sweep("transfer")
    for mib in TRANSFER_MIB[size_key]:
        pageable = torch.rand(int(mib * 2**20) // 4)
        pinned = pageable.pin_memory()
        run.point(mib, (tip2.copy_pageable, [pageable], bench_device),
                  (tip2.copy_pinned, [pinned], bench_device))  # fmt: skip
