"""더 나아가기: num_workers 다음에 볼 DataLoader 설정.

- `persistent_workers=True`: 에폭이 끝나도 워커 프로세스를 살려 두어, 에폭마다 워커를 새로 띄우는
  비용을 없앱니다.
- `prefetch_factor`: 워커 하나가 미리 만들어 두는 배치 수(기본 2).
- 파이썬 객체 목록을 담은 데이터셋은 fork로 띄운 워커가 읽기만 해도 메모리가 불어납니다
  (copy-on-read). 같은 값을 NumPy 배열 하나에 담으면 불어나지 않습니다. forkserver와 spawn은
  워커마다 데이터셋 사본을 pickle로 보내므로, 그때는 공유 메모리나 파일(np.memmap)에 둡니다.

실행: `python snippets/beyond_dataloader.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import multiprocessing
import random
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

# --8<-- [end:imports]


# --8<-- [start:dataset]
class TensorRows(Dataset):
    """이미 메모리에 있는 텐서의 행을 돌려주는 가벼운 데이터셋(검증 세트처럼 작고 빠른 것)."""

    def __init__(self, length=256, features=64, seed=0):
        self.data = torch.randn(length, features, generator=torch.Generator().manual_seed(seed))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.data[index]


# --8<-- [end:dataset]


# --8<-- [start:slow]
def make_loader_restarting(dataset, batch_size=32, num_workers=2):
    """기본값(persistent_workers=False): 에폭마다 워커를 새로 띄우고, 끝나면 닫습니다."""
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers)


# --8<-- [end:slow]


# --8<-- [start:fast]
def make_loader_persistent(dataset, batch_size=32, num_workers=2, prefetch_factor=2):
    """워커를 첫 에폭에 한 번 띄우고 끝까지 씁니다. prefetch_factor는 워커마다 미리 만들 배치 수."""
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=num_workers,
        persistent_workers=True,
        prefetch_factor=prefetch_factor,
    )


# --8<-- [end:fast]


# --8<-- [start:epochs]
def run_epochs(loader, epochs):
    """에폭 epochs번을 돌며 모든 배치를 꺼냅니다. 꺼낸 샘플 수를 돌려줍니다."""
    samples = 0
    for _ in range(epochs):
        for batch in loader:
            samples += len(batch)
    return samples


# --8<-- [end:epochs]


# --8<-- [start:memory]
class PythonFloats(Dataset):
    """값을 파이썬 float 객체의 리스트로 들고 있는 데이터셋(pytorch#13246의 모양).

    워커가 행을 읽을 때마다 각 float 객체의 참조 횟수(refcount)를 바꿉니다. 그러면 fork로 공유하던
    메모리 페이지가 워커마다 복사됩니다(copy-on-write가 읽기에서도 일어나는 셈).
    """

    def __init__(self, rows=1000, row_size=256, seed=0):
        rng = random.Random(seed)
        self.row_size = row_size
        self.values = [rng.random() for _ in range(rows * row_size)]

    def __len__(self):
        return len(self.values) // self.row_size

    def __getitem__(self, index):
        start = index * self.row_size
        return torch.tensor(self.values[start : start + self.row_size], dtype=torch.float64)


class NumpyFloats(Dataset):
    """같은 값을 NumPy 배열 하나에 담은 데이터셋. 읽기만 하면 공유 페이지를 건드리지 않습니다."""

    def __init__(self, rows=1000, row_size=256, seed=0):
        rng = random.Random(seed)
        self.row_size = row_size
        # 리스트를 거치지 않고 바로 채웁니다. 큰 리스트를 만들었다 버리면 그 빈자리를 워커가
        # 재사용하면서 공유 페이지에 쓰게 되어, 재는 값에 잡음이 섞입니다.
        count = rows * row_size
        self.values = np.fromiter((rng.random() for _ in range(count)), np.float64, count)

    def __len__(self):
        return len(self.values) // self.row_size

    def __getitem__(self, index):
        start = index * self.row_size
        return torch.from_numpy(self.values[start : start + self.row_size].copy())


def private_memory_mib(pid):
    """리눅스의 /proc/<pid>/smaps_rollup에서 USS(그 프로세스만 가진 메모리)를 MiB로 읽습니다."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                fields[name] = int(rest.split()[0])
    return (fields["Private_Clean"] + fields["Private_Dirty"]) / 1024


def worker_memory_growth_mib(dataset, batch_size=32, num_workers=2):
    """한 에폭 동안 워커들의 USS가 늘어난 양(MiB, 워커 전체 합)을 잽니다. 리눅스 전용입니다.

    첫 배치를 받은 뒤 한 번, 에폭이 끝난 뒤 한 번 잽니다. persistent 워커라서 에폭이 끝나도
    살아 있어 잴 수 있습니다. copy-on-read는 fork의 일이라 워커를 fork로 띄웁니다.
    """
    before = set(multiprocessing.active_children())
    loader = make_loader_persistent(dataset, batch_size, num_workers)
    loader.multiprocessing_context = "fork"  # Python 3.14의 기본값(forkserver)과 상관없이
    batches = iter(loader)
    next(batches)
    workers = [p for p in multiprocessing.active_children() if p not in before]
    start = {p.pid: private_memory_mib(p.pid) for p in workers}
    for _ in batches:
        pass
    growth = sum(private_memory_mib(pid) - mib for pid, mib in start.items())
    del batches, loader  # 워커를 닫습니다.
    return growth


# --8<-- [end:memory]


# --8<-- [start:start_method]
def worker_start_method(loader):
    """이 DataLoader가 워커를 띄우는 방식("fork", "forkserver", "spawn")입니다.

    multiprocessing_context를 주지 않으면 파이썬의 기본값을 씁니다. 리눅스의 기본값은 Python
    3.13까지 fork, 3.14부터 forkserver이고, macOS와 Windows는 spawn입니다.
    """
    if loader.multiprocessing_context is None:
        return multiprocessing.get_start_method()
    return loader.multiprocessing_context.get_start_method()


def bytes_sent_to_each_worker(dataset):
    """forkserver와 spawn이 워커마다 pickle로 보내는 데이터셋의 크기(바이트)입니다.

    fork는 보내지 않습니다. 워커가 메인 프로세스의 메모리를 그대로 물려받습니다.
    """
    return len(ForkingPickler.dumps(dataset))


class SharedFloats(Dataset):
    """값을 공유 메모리의 텐서 하나에 담은 데이터셋입니다.

    pickle에는 공유 메모리를 가리키는 핸들만 담기므로, forkserver와 spawn의 워커도 사본을 받지 않고
    같은 메모리를 읽습니다.
    """

    def __init__(self, values, row_size=256):
        self.row_size = row_size
        self.values = torch.from_numpy(values).share_memory_()  # 공유 메모리로 옮깁니다.

    def __len__(self):
        return len(self.values) // self.row_size

    def __getitem__(self, index):
        start = index * self.row_size
        return self.values[start : start + self.row_size].clone()


class MemmapFloats(Dataset):
    """값을 파일에 두고 워커가 np.memmap으로 열어 읽는 데이터셋입니다.

    np.memmap 객체를 속성으로 두면 pickle할 때 값 전체가 복사됩니다. 그래서 경로만 들고 있다가
    워커 안에서 처음 읽을 때 엽니다.
    """

    def __init__(self, path, count, row_size=256):
        self.path, self.count, self.row_size = path, count, row_size
        self.values = None

    def __len__(self):
        return self.count // self.row_size

    def __getitem__(self, index):
        if self.values is None:
            self.values = np.memmap(self.path, dtype=np.float64, mode="r", shape=(self.count,))
        start = index * self.row_size
        return torch.from_numpy(np.array(self.values[start : start + self.row_size]))

    def __getstate__(self):
        return {**self.__dict__, "values": None}  # 열린 파일은 보내지 않습니다.


# --8<-- [end:start_method]


def main(device="cpu", epochs=5):
    from torch.utils.benchmark import Timer  # 시연에서 시간을 잴 때만 씁니다.

    device = torch.device(device)
    print(f"장치: {device} (데이터 준비는 CPU에서 합니다)")
    dataset = TensorRows(length=128)
    loaders = {
        "persistent_workers=False": make_loader_restarting(dataset),
        "persistent_workers=True": make_loader_persistent(dataset),
    }
    print(f"워커를 띄우는 방식: {worker_start_method(loaders['persistent_workers=True'])}")
    for label, loader in loaders.items():
        print(
            f"{label}: 에폭 {epochs}번을 도는 시간을 잽니다(워커를 띄우는 시간이 들어 있습니다)..."
        )
        timer = Timer("f(loader, n)", globals={"f": run_epochs, "loader": loader, "n": epochs})
        seconds = timer.blocked_autorange(min_run_time=1).median
        print(f"{label}: 에폭 {epochs}번 {seconds * 1e3:.0f} ms")
    del loaders, loader  # 살아 있는 워커를 닫습니다.
    if sys.platform != "linux":
        print("워커 메모리는 리눅스의 /proc에서 읽으므로 이 운영체제에서는 재지 않습니다.")
        return
    for dataset_type in (PythonFloats, NumpyFloats):
        growth = worker_memory_growth_mib(dataset_type(rows=4000, row_size=256))
        print(
            f"{dataset_type.__name__}: 한 에폭 동안 워커 메모리(USS)가 {growth:.1f} MiB 늘었습니다"
        )
    values = NumpyFloats(rows=4000, row_size=256).values
    for label, shown in [
        ("NumPy 배열", NumpyFloats(4000, 256)),
        ("공유 메모리", SharedFloats(values)),
    ]:
        mib = bytes_sent_to_each_worker(shown) / 2**20
        print(f"forkserver·spawn이 워커마다 보내는 크기, {label}: {mib:.2f} MiB")


# --8<-- [start:guard]
if __name__ == "__main__":
    # 워커를 spawn으로 띄우는 macOS와 Windows에서는 워커마다 이 파일을 다시 import합니다.
    # 이 가드가 없으면 워커가 main()을 다시 실행하려다 멈춥니다.
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 11: persistent_workers와 prefetch_factor"))
# --8<-- [end:guard]
