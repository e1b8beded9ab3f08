"""더 나아가기 벤치마크: persistent_workers, prefetch_factor, 파이썬 객체 데이터셋의 워커 메모리.

1. epochs: 작은 데이터셋으로 에폭 여러 번. 에폭마다 워커를 새로 띄우는 기본값(기준) vs
   persistent_workers=True. 차이는 에폭마다 워커를 띄우고 닫는 비용입니다. 천장은 없습니다.
2. prefetch: 고르지 않은 데이터 준비(무거운 배치가 네 번에 한 번)와, 배치마다 CPU가 쉬는 학습
   스텝(GPU가 계산하는 시간을 sleep으로 둡니다)을 prefetch_factor 1, 2(기본값), 4로 잽니다.
   학습 스텝의 길이는 같은 실행에서 잰 "스레드 하나가 배치 하나를 만드는 평균 시간"의 0.55배로
   정합니다. 워커 2개의 평균 생산 속도보다 조금 느리게 소비하므로, 평균으로는 데이터가 충분하고
   무거운 배치가 몰릴 때만 기다리게 됩니다. 천장은 스텝 시간 × 배치 수(데이터를 전혀 기다리지
   않을 때)입니다.
3. memory: 같은 값을 파이썬 float 리스트와 NumPy 배열에 담아 워커 2개로 한 에폭을 읽고, 워커들의
   USS(그 프로세스만 가진 메모리)가 늘어난 양(worker_memory_growth_mib, 워커 합)을 셉니다. 시간은
   참고로만 잽니다. 리눅스의 /proc에서 읽으므로 다른 운영체제에서는 재지 않습니다.
"""

import sys
import time

import pytest
import torch

from snippets import beyond_dataloader as dl

PAGE = "dataloader-workers"

SIZES = {
    "quick": {
        "epochs": {"length": 16, "batch_size": 8, "epochs": 2},
        "prefetch": {"length": 32, "batch_size": 8, "light": 1, "heavy": 2, "size": 16},
        "memory": {"rows": 64, "row_size": 64},
    },
    "cpu": {
        "epochs": {"length": 256, "batch_size": 32, "epochs": 4},
        "prefetch": {"length": 128, "batch_size": 8, "light": 2, "heavy": 8, "size": 48},
        "memory": {"rows": 4000, "row_size": 256},
    },
    "cuda": {
        "epochs": {"length": 256, "batch_size": 32, "epochs": 4},
        "prefetch": {"length": 256, "batch_size": 8, "light": 2, "heavy": 8, "size": 48},
        "memory": {"rows": 8000, "row_size": 256},
    },
}
NUM_WORKERS = 2
ROUNDS = {"quick": 1, "cpu": 5, "cuda": 5}
STEP_FRACTION = 0.55


@pytest.mark.measures("epochs")
@pytest.mark.parametrize("variant", ["restart-workers", "persistent-workers"])
def test_epochs(measure, size_key, variant):
    config = SIZES[size_key]["epochs"]
    dataset = dl.TensorRows(length=config["length"])
    if variant == "restart-workers":
        loader, role = (
            dl.make_loader_restarting(dataset, config["batch_size"], NUM_WORKERS),
            "baseline",
        )
    else:
        loader, role = (
            dl.make_loader_persistent(dataset, config["batch_size"], NUM_WORKERS),
            "recommended",
        )
    dl.run_epochs(loader, 1)  # 첫 에폭은 양쪽 모두 워커를 띄웁니다. 재는 것은 그다음 에폭들입니다.
    try:
        samples = measure(
            dl.run_epochs,
            loader,
            config["epochs"],
            key=variant,
            group="epochs",
            variant=variant,
            role=role,
            params={
                "epochs": config["epochs"],
                "length": config["length"],
                "num_workers": NUM_WORKERS,
            },
            per_call={"samples": config["epochs"] * config["length"]},
            rounds=ROUNDS[size_key],
        )
    finally:
        del loader
    assert samples == config["epochs"] * config["length"]


def one_thread_batch_seconds(dataset, batch_size):
    """스레드 하나로 배치 하나를 만드는 평균 시간(워커 안에서 torch는 스레드 하나를 씁니다)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        started = time.perf_counter()
        for index in range(len(dataset)):
            dataset[index]
        return (time.perf_counter() - started) / (len(dataset) / batch_size)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def prefetch_setup(size_key):
    config = SIZES[size_key]["prefetch"]
    dataset = dl.UnevenWork(
        length=config["length"], size=config["size"], light=config["light"], heavy=config["heavy"]
    )
    step = STEP_FRACTION * one_thread_batch_seconds(dataset, config["batch_size"])
    return config, dataset, step


# 기본값 2가 기준입니다. 늘리면(4) 무거운 배치가 몰릴 때 버티는지, 줄이면(1) 얼마나 잃는지 봅니다.
PREFETCH_VARIANTS = {1: "other", 2: "baseline", 4: "recommended"}


@pytest.mark.measures("prefetch")
@pytest.mark.parametrize("prefetch_factor", list(PREFETCH_VARIANTS))
def test_prefetch(measure, size_key, prefetch_setup, prefetch_factor):
    config, dataset, step = prefetch_setup
    loader = dl.make_loader_persistent(dataset, config["batch_size"], NUM_WORKERS, prefetch_factor)
    dl.consume(loader, 0.0)  # 워커를 띄워 둡니다.
    batches = config["length"] // config["batch_size"]
    try:
        done = measure(
            dl.consume,
            loader,
            step,
            key=f"prefetch-{prefetch_factor}",
            group="prefetch",
            variant="prefetch",
            role=PREFETCH_VARIANTS[prefetch_factor],
            params={
                "prefetch_factor": prefetch_factor,
                "step_ms": round(step * 1e3, 2),
                "steps": batches,
            },
            per_call={"steps": batches},
            ceiling="no-waiting",
            rounds=ROUNDS[size_key],
        )
    finally:
        del loader
    assert done == batches


@pytest.mark.measures("prefetch")
def test_prefetch_ceiling(measure, size_key, prefetch_setup):
    config, _dataset, step = prefetch_setup
    batches = config["length"] // config["batch_size"]
    measure(
        dl.consume,
        [None] * batches,
        step,
        key="no-waiting",
        group="prefetch",
        variant="no-waiting",
        role="ceiling",
        params={"step_ms": round(step * 1e3, 2), "steps": batches},
        per_call={"steps": batches},
        rounds=ROUNDS[size_key],
    )


MEMORY_VARIANTS = {
    "python-floats": (dl.PythonFloats, "baseline"),
    "numpy-array": (dl.NumpyFloats, "recommended"),
}


@pytest.mark.measures("memory")
@pytest.mark.parametrize("variant", list(MEMORY_VARIANTS))
def test_worker_memory(measure, size_key, variant):
    if sys.platform != "linux":
        pytest.skip(
            "워커 메모리는 리눅스의 /proc/<pid>/smaps_rollup에서 읽으므로 "
            "이 운영체제에서는 재지 않았습니다."
        )
    config = SIZES[size_key]["memory"]
    dataset_type, role = MEMORY_VARIANTS[variant]
    dataset = dataset_type(**config)
    growth = dl.worker_memory_growth_mib(dataset, 32, NUM_WORKERS)
    loader = dl.make_loader_persistent(dataset, 32, NUM_WORKERS)
    dl.run_epochs(loader, 1)
    values = config["rows"] * config["row_size"]
    try:
        measure(
            dl.run_epochs,
            loader,
            1,
            key=variant,
            group="memory",
            variant=variant,
            role=role,
            params={"values": values, "num_workers": NUM_WORKERS},
            per_call={"samples": config["rows"]},
            metrics={"worker_memory_growth_mib": growth},
            rounds=ROUNDS[size_key],
        )
    finally:
        del loader
