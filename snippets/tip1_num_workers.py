"""팁 1: DataLoader에 워커(worker)를 써서 데이터를 여러 프로세스에서 함께 준비합니다.

실행: `python snippets/tip1_num_workers.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:os_import]
import os

# --8<-- [end:os_import]
# --8<-- [start:dataset_imports]
import zlib

import torch
import torch.nn.functional as F

# --8<-- [end:dataset_imports]
# --8<-- [start:loader_import]
from torch.utils.data import DataLoader, Dataset

# --8<-- [end:loader_import]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문(2020)의 한 줄입니다. 지금도 그대로 동작합니다.
def article_loader(dataset):
    return DataLoader(dataset, num_workers=8)


# --8<-- [end:article_2020]


# --8<-- [start:dataset]
class CompressedImageDataset(Dataset):
    """압축해 둔 이미지를 샘플마다 풀고 증강하는 데이터셋입니다. 샘플마다 CPU 일이 실제로 듭니다.

    PNG도 같은 deflate(zlib) 압축을 씁니다. 증강의 난수는 `seed + 인덱스`로 정하므로, 어느 워커가
    어떤 순서로 만들든 같은 인덱스는 같은 텐서가 됩니다.
    """

    MEAN = (0.485, 0.456, 0.406)
    STD = (0.229, 0.224, 0.225)

    def __init__(
        self,
        length=512,
        num_images=8,
        image_size=256,
        crop_size=224,
        out_size=112,
        seed=0,
        dtype=torch.float32,
    ):
        self.length = length
        self.image_size = image_size
        self.crop_size = crop_size
        self.out_size = out_size
        self.seed = seed
        self.dtype = dtype
        g = torch.Generator().manual_seed(seed)
        # 합성 이미지: 부드러운 줄무늬에 잡음을 더한 uint8 3×H×W. 만들 때 한 번만 압축해 둡니다.
        self.blobs = [
            zlib.compress(self._synthetic_image(g).numpy().tobytes(), 6) for _ in range(num_images)
        ]
        self.mean = torch.tensor(self.MEAN).view(3, 1, 1)
        self.std = torch.tensor(self.STD).view(3, 1, 1)
        # 5×5 가우시안 흐림 커널을 채널마다 하나씩(depthwise) 씁니다.
        x = torch.arange(5, dtype=torch.float32) - 2
        k1 = torch.exp(-(x**2) / 2)
        k2 = torch.outer(k1, k1)
        self.blur_kernel = (k2 / k2.sum()).expand(3, 1, 5, 5).contiguous()

    def _synthetic_image(self, g):
        s = self.image_size
        ys = torch.linspace(0, 1, s).view(1, s, 1)
        xs = torch.linspace(0, 1, s).view(1, 1, s)
        freq = torch.rand(3, 2, generator=g) * 12 + 2
        phase = torch.rand(3, 1, 1, generator=g) * 6.28
        waves = torch.sin(freq[:, :1, None] * ys + freq[:, 1:, None] * xs + phase)
        noise = torch.rand(3, s, s, generator=g) * 40
        return (waves * 100 + 107 + noise).clamp(0, 255).to(torch.uint8)

    def __len__(self):
        return self.length

    def decode(self, index):
        """압축을 풀어 uint8 3×H×W 텐서로 만듭니다(이미지 파일 디코딩에 해당합니다)."""
        raw = bytearray(zlib.decompress(self.blobs[index % len(self.blobs)]))
        return torch.frombuffer(raw, dtype=torch.uint8).view(3, self.image_size, self.image_size)

    def augment(self, image, g):
        """무작위 자르기 → 좌우 뒤집기 → 흐림 → 크기 줄이기 → 정규화."""
        top, left = torch.randint(
            0, self.image_size - self.crop_size + 1, (2,), generator=g
        ).tolist()
        image = image[:, top : top + self.crop_size, left : left + self.crop_size]
        if torch.rand((), generator=g) < 0.5:
            image = image.flip(-1)
        x = image.float().div(255).unsqueeze(0)
        x = F.conv2d(F.pad(x, (2, 2, 2, 2), mode="reflect"), self.blur_kernel, groups=3)
        x = F.interpolate(x, size=self.out_size, mode="bilinear", antialias=True)
        return ((x.squeeze(0) - self.mean) / self.std).to(self.dtype)

    def __getitem__(self, index):
        # 인덱스만으로 난수를 정합니다: num_workers가 몇이든 배치가 똑같습니다.
        g = torch.Generator().manual_seed(self.seed + index)
        label = index % len(self.blobs)
        return self.augment(self.decode(index), g), label


# --8<-- [end:dataset]


# --8<-- [start:slow]
def make_slow_loader(dataset, batch_size=32):
    """워커 없이 메인 프로세스가 배치마다 직접 풀고 증강합니다(느린 방식).

    메인 프로세스가 데이터를 준비하는 동안 GPU는 다음 배치를 기다립니다.
    """
    return DataLoader(dataset, batch_size=batch_size, num_workers=0)


# --8<-- [end:slow]


# --8<-- [start:fast]
def article_num_workers(num_gpus):
    """원문의 규칙: GPU 하나에 워커 넷."""
    return 4 * num_gpus


def usable_cpu_cores():
    """이 프로세스가 돌 수 있는 CPU 코어 수입니다(taskset, cpuset 반영).

    `docker --cpus`나 Kubernetes의 CPU limit 같은 CFS 할당량은 보지 못합니다. 그런 컨테이너에서는
    이 값이 실제로 쓸 수 있는 코어보다 클 수 있으니 `cores=`로 직접 주세요.
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def local_process_count():
    """이 컴퓨터에서 함께 도는 학습 프로세스 수입니다. torchrun은 LOCAL_WORLD_SIZE를 넣어 줍니다."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


def suggested_num_workers(num_gpus, cores=None, local_processes=None):
    """DataLoader 하나의 워커 수: 원문의 규칙을 코어 수로 자르고 이 컴퓨터의 프로세스 수로 나눕니다.

    num_workers는 DataLoader마다, 곧 DDP 프로세스마다 따로 띄웁니다. GPU 8개에 DDP 프로세스 8개라면
    컴퓨터 전체의 워커는 이 값의 8배입니다. GPU가 없으면 CPU를 장치 하나로 칩니다.
    """
    cores = usable_cpu_cores() if cores is None else cores
    local_processes = local_process_count() if local_processes is None else local_processes
    total = min(article_num_workers(max(num_gpus, 1)), cores)
    return max(1, total // max(local_processes, 1))


def make_loader(dataset, num_workers, batch_size=32):
    """워커 num_workers개로 배치를 준비하는 DataLoader입니다(0이면 메인 프로세스가 합니다)."""
    workers = num_workers > 0
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=num_workers,
        # 워커마다 배치를 두 개씩 미리 만들어 둡니다(기본값 2, 워커가 있을 때만 씁니다).
        prefetch_factor=2 if workers else None,
        # 에폭이 끝나도 워커를 살려 두어, 에폭마다 프로세스를 다시 띄우는 비용을 없앱니다.
        persistent_workers=workers,
    )


def make_fast_loader(dataset, batch_size=32, num_gpus=None):
    """GPU 수, 코어 수, 프로세스 수에 맞춘 워커로 배치를 미리, 병렬로 준비합니다(빠른 방식)."""
    if num_gpus is None:
        num_gpus = torch.cuda.device_count()
    return make_loader(dataset, suggested_num_workers(num_gpus), batch_size)


# --8<-- [end:fast]


# --8<-- [start:main]
def main(device="cpu", num_batches=6, batch_size=16):
    from torch.utils.benchmark import Timer

    device = torch.device(device)
    num_gpus = torch.cuda.device_count() if device.type == "cuda" else 0
    cores = usable_cpu_cores()
    suggested = suggested_num_workers(num_gpus, cores)
    print(f"장치: {device}, 쓸 수 있는 CPU 코어: {cores}개")
    dataset = CompressedImageDataset(length=batch_size * num_batches)
    rates = {}
    for num_workers in sorted({0, min(2, cores), suggested}):
        loader = make_loader(dataset, num_workers, batch_size)
        # 한 에폭을 잽니다. Timer는 재기 전에 한 번 돌려 보므로(워커를 띄우는 첫 에폭) 그 시간은
        # 빠지고, persistent_workers라서 다음 에폭부터는 띄워 둔 워커가 그대로 일합니다.
        epoch = Timer(
            "for x, _ in loader: x.to(device)", globals={"loader": loader, "device": device}
        )
        rates[num_workers] = len(dataset) / epoch.blocked_autorange(min_run_time=0.2).median
        line = f"num_workers={num_workers}: 초당 {rates[num_workers]:.0f}개 샘플"
        if num_workers > 0:
            line += f" (워커 없을 때의 {rates[num_workers] / rates[0]:.1f}배)"
        print(line)
        del loader  # persistent 워커를 바로 끝냅니다.
    print(
        f"원문의 규칙(4 × GPU 수): GPU {num_gpus}개 → num_workers={article_num_workers(num_gpus)}"
    )
    print(f"코어 수로 자른 제안: num_workers={suggested}. 이 값 주변을 직접 재 보고 고르세요.")
    if num_gpus == 0:
        print(
            "GPU가 없으면 원문의 규칙은 0을 줍니다. 그래도 데이터 준비가 무거우면 워커가 돕습니다."
        )


# --8<-- [end:main]


# --8<-- [start:guard]
if __name__ == "__main__":
    # 워커를 spawn으로 띄우는 macOS와 Windows에서는 워커마다 이 파일을 새로 import합니다.
    # 이 가드가 없으면 워커가 main()을 다시 실행하려다 RuntimeError로 멈춥니다.
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 1: DataLoader의 num_workers 비교"))
# --8<-- [end:guard]
