"""snippets/beyond_dataloader.py의 테스트: 설정을 바꿔도 배치가 같은지, 워커가 에폭 사이에
살아 있는지, 파이썬 객체 데이터셋에서 워커 메모리가 불어나는지(리눅스, fork), forkserver와 spawn이
워커마다 무엇을 보내는지."""

import multiprocessing
import os
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, DataLoader, Dataset

from snippets import beyond_dataloader as dl
from tests.site_build import page_quotes

PAGE = "beyond/11-dataloader-beyond-workers.md"


def all_batches(loader, epochs=1):
    batches = [batch for _ in range(epochs) for batch in loader]
    del loader  # persistent 워커를 바로 닫습니다.
    return batches


def assert_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a, e, rtol=0, atol=0)


@pytest.mark.parametrize(("length", "batch_size"), [(7, 3), (32, 8), (5, 16)])
@pytest.mark.parametrize("prefetch_factor", [1, 2, 4])
def test_persistent_loader_gives_the_same_batches(length, batch_size, prefetch_factor):
    dataset = dl.TensorRows(length=length, features=5)
    slow = all_batches(dl.make_loader_restarting(dataset, batch_size), epochs=2)
    fast = all_batches(dl.make_loader_persistent(dataset, batch_size, 2, prefetch_factor), 2)
    assert_same(fast, slow)
    torch.testing.assert_close(torch.cat(fast[: len(fast) // 2]), dataset.data, rtol=0, atol=0)


def worker_pids(loader):
    before = set(multiprocessing.active_children())
    dl.run_epochs(loader, 1)
    return {p.pid for p in multiprocessing.active_children()} - {p.pid for p in before}


def test_persistent_workers_survive_the_epoch_and_restarting_ones_do_not():
    dataset = dl.TensorRows(length=8, features=2)
    restarting = dl.make_loader_restarting(dataset, batch_size=4)
    assert worker_pids(restarting) == set()  # 에폭이 끝나면 워커가 닫혀 있습니다.
    persistent = dl.make_loader_persistent(dataset, batch_size=4)
    first = worker_pids(persistent)
    assert len(first) == 2
    # 두 번째 에폭도 같은 워커가 일합니다.
    assert {p.pid for p in multiprocessing.active_children()} >= first
    dl.run_epochs(persistent, 1)
    assert {p.pid for p in multiprocessing.active_children()} >= first
    del persistent


def test_prefetch_factor_needs_workers():
    # 페이지가 인용하는 오류: 워커 없이 prefetch_factor를 주면 DataLoader를 만들 때 멈춥니다.
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified") as e:
        dl.make_loader_persistent(dl.TensorRows(length=4), num_workers=0, prefetch_factor=2)
    assert page_quotes(PAGE, str(e.value))


def test_persistent_workers_need_workers():
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0") as e:
        torch.utils.data.DataLoader(dl.TensorRows(length=4), persistent_workers=True)
    assert page_quotes(PAGE, str(e.value))


@pytest.mark.parametrize(("rows", "row_size"), [(1, 1), (5, 3), (16, 64)])
def test_numpy_dataset_equals_python_dataset(rows, row_size):
    slow = dl.PythonFloats(rows=rows, row_size=row_size, seed=3)
    fast = dl.NumpyFloats(rows=rows, row_size=row_size, seed=3)
    assert len(fast) == len(slow) == rows
    for i in range(rows):
        assert fast[i].dtype == slow[i].dtype == torch.float64
        torch.testing.assert_close(fast[i], slow[i], rtol=0, atol=0)
    assert_same(
        all_batches(dl.make_loader_persistent(fast, batch_size=4)),
        all_batches(dl.make_loader_persistent(slow, batch_size=4)),
    )


@pytest.mark.skipif(sys.platform != "linux", reason="/proc는 리눅스에만 있습니다")
def test_private_memory_reads_this_process():
    assert dl.private_memory_mib(os.getpid()) > 1


@pytest.mark.skipif(sys.platform != "linux", reason="/proc는 리눅스에만 있습니다")
def test_python_objects_grow_worker_memory_and_numpy_does_not():
    # 값 약 105만 개: 파이썬 float는 개당 24바이트라 약 24 MiB입니다. 워커 둘이 나눠 읽으며 그
    # 페이지를 복사합니다. NumPy 배열은 읽기만 하므로 워커 자신의 할당(몇 MiB 이하)만큼만 늡니다.
    config = {"rows": 4096, "row_size": 256}
    numpy_growth = dl.worker_memory_growth_mib(dl.NumpyFloats(**config))
    python_growth = dl.worker_memory_growth_mib(dl.PythonFloats(**config))
    assert python_growth > 12
    assert numpy_growth < python_growth / 2


def test_dataloader_uses_pythons_default_start_method():
    loader = DataLoader(dl.TensorRows(length=4), num_workers=1)
    assert dl.worker_start_method(loader) == multiprocessing.get_start_method()
    if sys.platform == "linux":
        # 리눅스의 기본값은 Python 3.13까지 fork, 3.14부터 forkserver입니다.
        expected = "forkserver" if sys.version_info >= (3, 14) else "fork"
        assert dl.worker_start_method(loader) == expected
    loader = DataLoader(dl.TensorRows(length=4), num_workers=1, multiprocessing_context="spawn")
    assert dl.worker_start_method(loader) == "spawn"


class RemembersPickling(Dataset):
    """워커가 pickle로 받은 사본이면 True를, 메인 프로세스의 객체를 물려받았으면 False를 냅니다."""

    def __init__(self):
        self.unpickled = False

    def __setstate__(self, state):
        self.__dict__.update(state, unpickled=True)

    def __len__(self):
        return 2

    def __getitem__(self, index):
        return torch.tensor(self.unpickled)


@pytest.mark.skipif(
    sys.platform != "linux", reason="fork와 forkserver를 모두 쓸 수 있는 리눅스에서"
)
@pytest.mark.parametrize(("context", "copied"), [("fork", False), ("forkserver", True)])
def test_forkserver_workers_get_a_pickled_copy_and_fork_workers_do_not(context, copied):
    loader = DataLoader(
        RemembersPickling(), batch_size=None, num_workers=1, multiprocessing_context=context
    )
    assert [bool(flag) for flag in loader] == [copied, copied]


def test_shared_memory_and_a_memmap_path_send_only_a_handle(tmp_path):
    values = dl.NumpyFloats(rows=64, row_size=256).values  # 128 KiB
    path = tmp_path / "values.f64"
    values.tofile(path)
    assert dl.bytes_sent_to_each_worker(dl.NumpyFloats(rows=64, row_size=256)) > values.nbytes
    assert dl.bytes_sent_to_each_worker(dl.SharedFloats(values)) < values.nbytes / 100
    assert dl.bytes_sent_to_each_worker(dl.MemmapFloats(path, values.size)) < values.nbytes / 100
    # np.memmap 객체를 그대로 들고 있으면 pickle이 값 전체를 복사합니다.
    memmap = np.memmap(path, dtype=np.float64, mode="r")
    assert len(ForkingPickler.dumps(memmap)) > values.nbytes


@pytest.mark.skipif(sys.platform != "linux", reason="forkserver는 리눅스에서 확인합니다")
def test_shared_and_memmap_datasets_give_the_same_batches_under_forkserver(tmp_path):
    reference = dl.NumpyFloats(rows=12, row_size=8, seed=5)
    path = tmp_path / "values.f64"
    reference.values.tofile(path)
    expected = [reference[i] for i in range(len(reference))]
    # 두 데이터셋을 이어 워커 하나로 읽습니다(워커를 띄울 때마다 torch를 새로 import합니다).
    both = ConcatDataset([dl.SharedFloats(reference.values, 8), dl.MemmapFloats(path, 96, 8)])
    loader = DataLoader(both, batch_size=None, num_workers=1, multiprocessing_context="forkserver")
    assert_same(list(loader), expected + expected)


def test_main_runs_on_cpu(capsys):
    dl.main("cpu", epochs=2)
    out = capsys.readouterr().out
    assert "persistent_workers=False: 에폭 2번" in out
    assert "persistent_workers=True: 에폭 2번" in out
    assert "워커를 띄우는 방식: " in out
    if sys.platform == "linux":
        assert "PythonFloats: 한 에폭 동안 워커 메모리(USS)가" in out
        assert "워커마다 보내는 크기, 공유 메모리: 0.00 MiB" in out
