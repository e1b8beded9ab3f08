"""더 나아가기 벤치마크: persistent_workers, prefetch_factor, 파이썬 객체 데이터셋의 워커 메모리.

1. epochs: 작은 데이터셋으로 에폭 여러 번. 에폭마다 워커를 새로 띄우는 기본값(기준) vs
   persistent_workers=True. 차이는 에폭마다 워커를 띄우고 닫는 비용입니다. 천장은 없습니다.
2. prefetch: 고르지 않은 데이터 준비(무거운 배치가 네 번에 한 번)와, 배치마다 CPU가 쉬는 학습
   스텝(GPU가 계산하는 시간을 sleep으로 둡니다)을 prefetch_factor 1, 2(기본값), 4로 잽니다.
   천장은 스텝 시간 × 배치 수(데이터를 전혀 기다리지 않을 때)입니다.
3. memory: 같은 값을 파이썬 float 리스트와 NumPy 배열에 담아 워커 2개로 한 에폭을 읽고, 워커들의
   USS(그 프로세스만 가진 메모리)가 늘어난 양(worker_memory_growth_mib, 워커 합)을 셉니다. 시간은
   참고로만 잽니다. 리눅스의 /proc에서 읽으므로 다른 운영체제에서는 재지 않습니다.
"""

import sys
import time

import pytest

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
# prefetch 묶음의 학습 스텝: 워커 2개가 배치를 만드는 평균 속도가 소비 속도의 1.3배가 되도록
# 스텝 길이를 같은 실행에서 정합니다. 평균으로는 데이터가 충분하고, 무거운 배치가 몰릴 때만
# 기다리게 되어 prefetch_factor가 버티는 힘이 드러납니다(측정 방법 페이지의 "DataLoader" 절).
PRODUCTION_OVER_CONSUMPTION = 1.3


@pytest.mark.measures("epochs")
def test_epochs(compare, size_key):
    config = SIZES[size_key]["epochs"]
    dataset = dl.TensorRows(length=config["length"])
    group = compare("epochs", params={"epochs": config["epochs"], "length": config["length"],
                    "num_workers": NUM_WORKERS},
                    per_call={"samples": config["epochs"] * config["length"]})  # fmt: skip
    for variant, make, role in (
        ("restart-workers", dl.make_loader_restarting, "baseline"),
        ("persistent-workers", dl.make_loader_persistent, "recommended"),
    ):
        loader = make(dataset, config["batch_size"], NUM_WORKERS)
        # 첫 에폭은 양쪽 모두 워커를 띄웁니다. 재는 것은 그다음 에폭들입니다.
        dl.run_epochs(loader, 1)
        group.add(variant, dl.run_epochs, loader, config["epochs"], role=role, memory=False)
    del loader
    for samples in group.run().values():
        assert samples == config["epochs"] * config["length"]


def production_seconds_per_batch(dataset, batch_size):
    """워커 2개(prefetch_factor 기본값)가 기다림 없이 배치 하나를 내놓는 시간의 중앙값."""
    loader = dl.make_loader_persistent(dataset, batch_size, NUM_WORKERS)
    dl.consume(loader, 0.0)  # 워커를 띄워 둡니다.
    batches = len(dataset) // batch_size
    times = []
    for _ in range(3):
        started = time.perf_counter()
        dl.consume(loader, 0.0)
        times.append((time.perf_counter() - started) / batches)
    del loader
    return sorted(times)[1]


@pytest.fixture(scope="module")
def prefetch_setup(size_key):
    config = SIZES[size_key]["prefetch"]
    dataset = dl.UnevenWork(
        length=config["length"], size=config["size"], light=config["light"], heavy=config["heavy"]
    )
    step = PRODUCTION_OVER_CONSUMPTION * production_seconds_per_batch(dataset, config["batch_size"])
    return config, dataset, step


# 기본값 2가 기준입니다. 늘리면(4) 무거운 배치가 몰릴 때 버티는지, 줄이면(1) 얼마나 잃는지 봅니다.
PREFETCH_VARIANTS = {1: "other", 2: "baseline", 4: "recommended"}


@pytest.mark.measures("prefetch")
def test_prefetch(compare, size_key, prefetch_setup):
    config, dataset, step = prefetch_setup
    batches = config["length"] // config["batch_size"]
    group = compare("prefetch", params={"step_ms": round(step * 1e3, 2), "steps": batches},
                    per_call={"steps": batches})  # fmt: skip
    for prefetch_factor, role in PREFETCH_VARIANTS.items():
        loader = dl.make_loader_persistent(dataset, config["batch_size"], NUM_WORKERS,
                                           prefetch_factor)  # fmt: skip
        dl.consume(loader, 0.0)  # 워커를 띄워 둡니다.
        group.add("prefetch", dl.consume, loader, step, key=f"prefetch-{prefetch_factor}",
                  role=role, params={"prefetch_factor": prefetch_factor}, ceiling="no-waiting",
                  memory=False)  # fmt: skip
    # 천장: 데이터를 전혀 기다리지 않을 때(스텝 시간 × 배치 수).
    group.add("no-waiting", dl.consume, [None] * batches, step, role="ceiling", memory=False)
    del loader
    assert set(group.run().values()) == {batches}


MEMORY_VARIANTS = {
    "python-floats": (dl.PythonFloats, "baseline"),
    "numpy-array": (dl.NumpyFloats, "recommended"),
}


@pytest.mark.measures("memory")
def test_worker_memory(compare, size_key):
    if sys.platform != "linux":
        pytest.skip(
            "워커 메모리는 리눅스의 /proc/<pid>/smaps_rollup에서 읽으므로 "
            "이 운영체제에서는 재지 않았습니다."
        )
    config = SIZES[size_key]["memory"]
    values = config["rows"] * config["row_size"]
    group = compare("memory", params={"values": values, "num_workers": NUM_WORKERS},
                    per_call={"samples": config["rows"]})  # fmt: skip
    for variant, (dataset_type, role) in MEMORY_VARIANTS.items():
        dataset = dataset_type(**config)
        growth = dl.worker_memory_growth_mib(dataset, 32, NUM_WORKERS)
        loader = dl.make_loader_persistent(dataset, 32, NUM_WORKERS)
        dl.run_epochs(loader, 1)
        group.add(variant, dl.run_epochs, loader, 1, role=role, memory=False,
                  metrics={"worker_memory_growth_mib": growth})  # fmt: skip
    del loader
    group.run()
