"""더 나아가기 벤치마크: persistent_workers와 파이썬 객체 데이터셋의 워커 메모리.

1. epochs: 작은 데이터셋으로 에폭 여러 번. 에폭마다 워커를 새로 띄우는 기본값(기준) vs
   persistent_workers=True. 차이는 에폭마다 워커를 띄우고 닫는 비용입니다. 천장은 없습니다.
2. memory: 같은 값을 파이썬 float 리스트와 NumPy 배열에 담아 워커 2개로 한 에폭을 읽고, 워커들의
   USS(그 프로세스만 가진 메모리)가 늘어난 양(worker_memory_growth_mib, 워커 합)을 셉니다. 시간은
   참고로만 잽니다. 리눅스의 /proc에서 읽으므로 다른 운영체제에서는 재지 않습니다.

prefetch_factor 묶음은 뺐습니다. 2코어 CPU에서 소비자가 sleep으로 쉬는데도 로더가 천장의 63~67%에
머물러, 생산이 소비를 앞지르지 못했고 미리 만든 배치가 쌓이지 않았습니다. 무거운 배치를 두 워커에
나누고 샘플의 일을 여덟 배로 키워도 50~74%였고, 원인은 찾지 못했습니다. 보여 줄 것이 없는
묶음은 재지 않고,
페이지는 prefetch_factor가 언제 돕는지 글로 설명합니다.
"""

import sys

import pytest

from snippets import beyond_dataloader as dl

PAGE = "dataloader-workers"

SIZES = {
    "quick": {
        "epochs": {"length": 16, "batch_size": 8, "epochs": 2},
        "memory": {"rows": 64, "row_size": 64},
    },
    "cpu": {
        "epochs": {"length": 256, "batch_size": 32, "epochs": 4},
        "memory": {"rows": 4000, "row_size": 256},
    },
    "cuda": {
        "epochs": {"length": 256, "batch_size": 32, "epochs": 4},
        "memory": {"rows": 8000, "row_size": 256},
    },
}
NUM_WORKERS = 2


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
