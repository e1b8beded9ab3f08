"""팁 1 벤치마크: DataLoader의 워커 수(num_workers)에 따른 정상 상태 처리량.

샘플마다 압축을 풀고 증강하는 스니펫의 데이터셋을 워커 0, 1, 2, 4, …, 코어 수의 두 배로 읽습니다.
워커를 띄우는 시간은 넣지 않습니다(측정 방법 페이지의 "팁 1" 절). 천장은 워커 하나의 속도 × 코어 수.
"""

import functools
import gc
import multiprocessing
import time

import pytest
import torch

from snippets import tip1_num_workers as tip1

PAGE = "tip1"

CORES = tip1.usable_cpu_cores()
NUM_GPUS = torch.cuda.device_count()
# make_fast_loader가 고르는 워커 수(기사의 4 × GPU 수를 코어 수로 자른 값)입니다.
FAST_WORKERS = tip1.suggested_num_workers(NUM_GPUS, CORES)
# 0, 1, 2, 4, …(2의 거듭제곱), 코어 수, 코어 수의 두 배, 빠른 방식의 값. 코어가 아주 많은
# 컴퓨터에서 측정이 끝없이 길어지지 않게 64개에서 멈춥니다(GPU 측정 컴퓨터는 16코어입니다).
MAX_WORKERS = min(2 * CORES, 64)
WORKER_COUNTS = sorted(
    {0, min(CORES, MAX_WORKERS), MAX_WORKERS, FAST_WORKERS}
    | {1 << k for k in range(MAX_WORKERS.bit_length()) if 1 << k <= MAX_WORKERS}
)

# 데이터셋 설정. quick은 테스트처럼 작은 이미지로 흐름만 봅니다.
DATASET = {
    "full": {"image_size": 256, "crop_size": 224, "out_size": 112, "batch_size": 32},
    "quick": {"image_size": 64, "crop_size": 56, "out_size": 32, "batch_size": 4},
}
# DataLoader의 기본값: 워커마다 미리 만들어 두는 배치 수입니다.
PREFETCH_FACTOR = 2
# 샘플은 인덱스로 그때그때 만들므로 길이는 공짜입니다. 측정 중에 에폭이 끝나지 않게 길게 둡니다.
ENDLESS = 10**8
# 미리 채우기를 기다리는 시간: 워커 하나가 배치 prefetch_factor개를 만드는 시간(2코어 CPU에서
# 배치 하나 약 0.07초)의 몇 배입니다. 시간 밖이라 결과에는 들어가지 않고 측정만 길어집니다.
SETTLE_S = 0.5


def batches_per_call(quick):
    """호출 한 번에 꺼낼 배치 수: 코어 하나에 배치 둘 이상이라 모든 워커가 매번 일합니다.

    같은 그룹의 기준 대비 속도는 중앙값의 비율이므로, 워커 수와 상관없이 배치 수가 같아야 합니다.
    """
    return 2 if quick else max(8, 2 * min(CORES, 32))


def make_dataset(quick):
    config = dict(DATASET["quick" if quick else "full"])
    batch_size = config.pop("batch_size")
    return tip1.CompressedImageDataset(length=ENDLESS, **config), batch_size


def build_loader(dataset, num_workers, batch_size):
    """스니펫의 함수로 로더를 만듭니다: 0개는 느린 방식, 제안값은 빠른 방식 그대로입니다."""
    if num_workers == 0:
        return tip1.make_slow_loader(dataset, batch_size)
    if num_workers == FAST_WORKERS:
        return tip1.make_fast_loader(dataset, batch_size, num_gpus=NUM_GPUS)
    return tip1.make_loader(dataset, num_workers, batch_size)


def next_batches(batches, count):
    """이미 돌고 있는 이터레이터에서 배치 count개를 꺼내고, 꺼낸 샘플 수를 돌려줍니다."""
    samples = 0
    for _ in range(count):
        images, _labels = next(batches)
        samples += len(images)
    return samples


def role_of(num_workers):
    if num_workers == 0:
        return "baseline"
    return "recommended" if num_workers == FAST_WORKERS else "other"


def drain(batches, num_workers, settle_s):
    """재기 전에 두 가지를 합니다. 먼저 잠깐 쉬어, 앞에서 잰 로더의 워커들이 미리 채우기
    (워커마다 prefetch_factor개)를 마치게 합니다. 그러지 않으면 그 워커들이 이번 측정과 코어를
    나눠 씁니다. 다음으로 이 로더가 쌓아 둔 배치를 버립니다. 그래야 잰 시간이 쌓아 둔 배치가 아니라
    워커가 지금 만드는 속도가 됩니다."""
    time.sleep(settle_s)
    if num_workers:
        next_batches(batches, PREFETCH_FACTOR * num_workers)


# 코어보다 워커가 많을 때 torch가 내는 경고입니다. 일부러 코어 수의 두 배까지 재므로 끕니다.
@pytest.mark.measures("throughput")
@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_throughput(compare, size_key):
    quick = size_key == "quick"
    before = set(multiprocessing.active_children())
    dataset, batch_size = make_dataset(quick)
    count = batches_per_call(quick)
    settle_s = 0.0 if quick else SETTLE_S
    params = {"batch_size": batch_size, "cores": CORES, "batches": count}
    group = compare("throughput", params=params,
                    per_call={"samples": count * batch_size})  # fmt: skip
    loaders = {}
    try:
        for num_workers in WORKER_COUNTS:
            started = time.perf_counter()
            loader = build_loader(dataset, num_workers, batch_size)
            assert loader.num_workers == num_workers
            batches = loaders[num_workers] = iter(loader)
            # 워커를 띄우고 한 바퀴를 버립니다. 워커들은 첫 배치를 거의 동시에 내놓기 때문입니다.
            # 여기까지가 워커를 띄우는 한 번의 비용입니다(본전 계산에 씁니다).
            next_batches(batches, max(1, num_workers))
            one_time = time.perf_counter() - started
            # 권장 워커 수는 장치마다 달라 key를 고정합니다(guide/pages.toml의 본전 계산이 씁니다).
            key = "workers-suggested" if num_workers == FAST_WORKERS else f"workers-{num_workers}"
            group.add(
                "workers", next_batches, batches, count, key=key, role=role_of(num_workers),
                params={"num_workers": num_workers}, ceiling="cores-x-one-worker", memory=False,
                metrics={"one_time_s": one_time},
                before_round=functools.partial(drain, batches, num_workers, settle_s),
            )  # fmt: skip
        for samples in group.run().values():
            assert samples == count * batch_size
    finally:
        # persistent 워커를 바로 끝내, 다음 측정에 남은 프로세스가 끼지 않게 합니다.
        loaders.clear()
        del batches, loader
        gc.collect()
    assert set(multiprocessing.active_children()) <= before


def one_thread_batches(batches, count):
    """워커 하나가 하는 일: 스레드 하나로 배치를 만들고 쌓습니다(워커 안의 torch는 스레드 1개)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return next_batches(batches, count)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.measures("ceiling")
def test_ceiling(compare, size_key):
    """천장: 워커 하나의 속도 × 코어 수(계산값). 한 번에 코어 수만큼의 워커만 돌 수 있습니다."""
    dataset, batch_size = make_dataset(size_key == "quick")
    count = 2 if size_key == "quick" else 4
    batches = iter(tip1.make_slow_loader(dataset, batch_size))
    next_batches(batches, 1)
    group = compare("ceiling", params={"batch_size": batch_size, "batches": count},
                    per_call={"samples": count * batch_size})  # fmt: skip
    group.add("one-worker", one_thread_batches, batches, count, role="ceiling", memory=False)
    samples = group.run()["one-worker"]
    assert samples == count * batch_size
    one_worker = group.rate("one-worker", "samples_per_s")
    if one_worker is not None:
        group.computed("cores-x-one-worker", "cores-x-one-worker", params={"cores": CORES},
                       metrics={"samples_per_s": one_worker * CORES})  # fmt: skip


# 스윕: 샘플 하나의 CPU 일(압축 이미지 한 변)에 따라 권장 워커 수 대 워커 0개. 일이 작으면 워커가
# 배치를 프로세스 사이로 넘기는 비용이 더 커서 느려지고, 일이 크면 코어 수만큼 빨라집니다.
# 이미지 한 변이 2배면 풀고 자르는 일이 약 4배입니다(256에서 배치 32개에 CPU 0.1초 안팎).
IMAGE_SIZES = {
    "quick": [16],
    "cpu": [16, 32, 64, 128, 256, 512],
    "cuda": [32, 64, 128, 256, 512],
}


@pytest.mark.sweep("work")
@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_work_sweep(sweep, size_key):
    run = sweep("work")
    quick = size_key == "quick"
    count = batches_per_call(quick)
    for image in IMAGE_SIZES[size_key]:
        crop = image * 7 // 8
        dataset = tip1.CompressedImageDataset(length=ENDLESS, image_size=image, crop_size=crop,
                                              out_size=max(8, crop // 2))  # fmt: skip
        loaders = [iter(build_loader(dataset, n, 4 if quick else 32)) for n in (0, FAST_WORKERS)]
        for batches, workers in zip(loaders, (0, FAST_WORKERS), strict=True):
            next_batches(batches, max(1, workers))  # 워커를 띄우고 첫 배치들을 버립니다.
        slow, fast = (next_batches, loaders[0], count), (next_batches, loaders[1], count)
        samples = run.point(image, slow, fast,
                            params={"num_workers": FAST_WORKERS, "batches": count})  # fmt: skip
        assert samples[0] == samples[1]
        del loaders
        gc.collect()
