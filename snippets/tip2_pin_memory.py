"""팁 2: DataLoader에 pin_memory=True를 주고, 장치로는 non_blocking=True로 복사합니다.

실행: `python snippets/tip2_pin_memory.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:torch_import]
import torch

# --8<-- [end:torch_import]
# --8<-- [start:loader_import]
from torch.utils.data import DataLoader

# --8<-- [end:loader_import]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문 그대로입니다. 지금도 동작하지만, 가속기가 없으면 경고만 내고 고정하지 않습니다.
def article_loader(dataset):
    return DataLoader(dataset, pin_memory=True)


# --8<-- [end:article_2020]


def make_batch(batch_size=64, image_size=224, dtype=torch.float32, device="cpu"):
    """이미지(N×3×H×W, 0~1)와 정수 레이블(N,) 한 배치를 만듭니다. 기본은 호스트 메모리입니다."""
    images = torch.rand(batch_size, 3, image_size, image_size, dtype=dtype, device=device)
    labels = torch.randint(0, 1000, (batch_size,), device=device)
    return images, labels


# --8<-- [start:slow]
def copy_pageable(batch, device):
    """페이지 가능 메모리에 있는 배치를 그대로 복사합니다(느린 방식).

    드라이버가 고정 메모리의 중간 버퍼로 옮긴 뒤 GPU로 보내고, CPU는 복사가 끝나기를 기다립니다.
    """
    return tuple(t.to(device) for t in batch)


# --8<-- [end:slow]


# --8<-- [start:fast]
def pin_if_available(tensor):
    """가속기가 있을 때만 텐서를 고정 메모리(pinned memory)로 옮기고, 없으면 그대로 돌려줍니다."""
    # 가속기가 없으면 pin_memory()가 RuntimeError를 냅니다. MPS는 DataLoader도 고정하지 않습니다.
    if not torch.accelerator.is_available():
        return tensor
    if torch.accelerator.current_accelerator().type == "mps":
        return tensor
    return tensor.pin_memory()


def pin_batch(batch):
    """배치를 한 번 고정해 둡니다. 고정 자체도 복사이므로 복사할 때마다 하지 않습니다."""
    return tuple(pin_if_available(t) for t in batch)


def copy_pinned(batch, device):
    """고정된 배치를 비동기로 복사합니다(빠른 방식). CPU는 복사가 끝나기를 기다리지 않습니다.

    결과를 같은 스트림에서 쓰면 PyTorch가 순서를 지킵니다. 복사가 끝나기 전에 원본을 고치지 마세요.
    """
    return tuple(t.to(device, non_blocking=True) for t in batch)


# --8<-- [end:fast]


# --8<-- [start:dataloader]
def make_loader(dataset, batch_size=64, num_workers=2, pin_memory=True, shuffle=True):
    # 워커가 배치를 만들면, 메인 프로세스의 pin-memory 스레드가 그 배치를 고정 메모리로 옮깁니다.
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        num_workers=num_workers,
        pin_memory=pin_memory,
    )


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    loss = None
    for images, labels in loader:
        # 배치가 이미 고정되어 있으므로 복사를 걸어 두고 CPU는 바로 다음 줄로 갑니다.
        # 모델의 커널은 같은 스트림에 들어가므로 복사가 끝난 뒤에 실행됩니다.
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach()


# --8<-- [end:dataloader]


# --8<-- [start:overlap]
def train_with_prefetch(model, loader, optimizer, device="cuda"):
    """다음 배치를 복사 전용 스트림으로 옮기는 동안 현재 배치로 학습합니다(CUDA 필요).

    loader는 pin_memory=True여야 합니다. 페이지 가능 메모리에서는 복사가 겹치지 않습니다.
    """
    if not torch.cuda.is_available():
        raise SystemExit("이 예제는 CUDA GPU가 필요합니다. 이 컴퓨터에서는 CUDA를 찾지 못했습니다.")
    device = torch.device(device)
    copy_stream = torch.cuda.Stream(device)
    compute_stream = torch.cuda.current_stream(device)

    def start_copy(batch):
        # 다른 스트림에 넣어야 GPU의 복사 엔진이 계산 커널과 동시에 일할 수 있습니다.
        with torch.cuda.stream(copy_stream):
            return [t.to(device, non_blocking=True) for t in batch]

    model.train()
    batches = iter(loader)
    upcoming = next(batches, None)
    upcoming = start_copy(upcoming) if upcoming is not None else None
    loss = None
    while upcoming is not None:
        # 이 배치의 복사가 끝날 때까지 계산 스트림만 기다립니다(CPU는 기다리지 않습니다).
        compute_stream.wait_stream(copy_stream)
        for t in upcoming:
            # 복사 스트림에서 할당한 메모리를 계산 스트림이 다 쓰기 전에 재사용하지 않게 합니다.
            t.record_stream(compute_stream)
        images, labels = upcoming
        following = next(batches, None)
        upcoming = start_copy(following) if following is not None else None
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach()


# --8<-- [end:overlap]


def measure_copy_bandwidth(device="cuda", batch_size=256, image_size=224):
    """큰 배치의 호스트→장치 복사 속도(GB/s)를 세 가지 방식으로 잽니다(CUDA 필요)."""
    # 시연에만 쓰는 import는 함수 안에 두어 페이지의 `imports` 구역을 짧게 유지합니다.
    from torch.utils.benchmark import Timer

    if not torch.cuda.is_available():
        raise SystemExit("이 예제는 CUDA GPU가 필요합니다. 이 컴퓨터에서는 CUDA를 찾지 못했습니다.")
    device = torch.device(device)
    pageable = make_batch(batch_size, image_size)
    pinned = pin_batch(pageable)
    nbytes = sum(t.numel() * t.element_size() for t in pageable)
    cases = {
        "페이지 가능 메모리에서 복사": "copy_pageable(pageable, device)",
        "고정 메모리에서 비동기 복사": "copy_pinned(pinned, device)",
        "매번 pin_memory() 후 복사": "copy_pinned(pin_batch(pageable), device)",
    }
    names = {
        "copy_pageable": copy_pageable,
        "copy_pinned": copy_pinned,
        "pin_batch": pin_batch,
        "pageable": pageable,
        "pinned": pinned,
        "device": device,
    }
    result = {}
    for label, stmt in cases.items():
        # Timer는 측정 구간마다 CUDA를 동기화하므로 비동기 복사도 끝날 때까지 잽니다.
        seconds = Timer(stmt, globals=names).blocked_autorange(min_run_time=0.5).median
        result[label] = nbytes / seconds / 1e9
    return nbytes, result


def show_cpu_behaviour():
    """가속기 없이 pin_memory=True가 어떻게 되는지 보여 줍니다."""
    import warnings

    from torch.utils.data import TensorDataset

    print(f"가속기 사용 가능: {torch.accelerator.is_available()}")
    dataset = TensorDataset(*make_batch(batch_size=8, image_size=8))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        images, labels = next(iter(make_loader(dataset, batch_size=4, num_workers=0)))
    for warning in caught:
        print(f"DataLoader 경고: {warning.message}")
    print(f"DataLoader가 준 배치가 고정 메모리에 있는가: {images.is_pinned()}")
    print(f"pin_if_available()가 같은 텐서를 돌려주는가: {pin_if_available(images) is images}")
    copied = copy_pinned((images, labels), "cpu")
    print(
        f'.to("cpu", non_blocking=True)가 복사 없이 같은 텐서를 돌려주는가: {copied[0] is images}'
    )
    print("고정 메모리와 비동기 복사의 효과는 CUDA GPU가 있어야 볼 수 있습니다.")
    print("GPU가 있는 컴퓨터에서 `--device cuda`로 실행하면 복사 속도(GB/s)를 잽니다.")


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}")
    if device.type != "cuda":
        show_cpu_behaviour()
        return
    nbytes, result = measure_copy_bandwidth(device)
    print(f"배치 크기: {nbytes / 1e6:.0f} MB (이미지 float32 + 레이블 int64)")
    for label, gbps in result.items():
        print(f"{label}: {gbps:.1f} GB/s")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 2: 고정 메모리(pin_memory)"))
