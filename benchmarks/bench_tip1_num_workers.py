"""팁 1 벤치마크: DataLoader의 워커 수(num_workers)에 따른 처리량.

샘플마다 실제로 압축을 풀고 증강하는 `CompressedImageDataset`을 스니펫의 로더 함수로 읽습니다.
워커 수는 0, 1, 2, 4, …, 쓸 수 있는 코어 수의 두 배까지 바꾸고, 모두 한 그룹에 넣어 처리량이
어디서 더 오르지 않는지 보이게 합니다. 워커 0개가 기준, `make_fast_loader`가 고르는 워커 수가
빠른 방식입니다.

무엇을 재는가: 학습 중 데이터 준비의 정상 상태(steady state) 처리량입니다. 워커를 띄우는 시간은
넣지 않습니다. 기사의 요점은 학습하는 동안 배치가 얼마나 빨리 나오느냐이고, 띄우는 비용은 학습
한 번에 한 번뿐이기 때문입니다(스니펫의 `persistent_workers=True`도 에폭마다 다시 띄우지 않게
합니다). 그래서 아주 긴 에폭 하나의 이터레이터를 만들고, 워커를 띄운 뒤 한 바퀴(워커마다 배치
하나)를 버리고 나서, 호출 한 번에 같은 수의 배치를 꺼내는 시간을 잽니다. 스니펫의
`measure_throughput`과 같은 방식입니다. 호출 사이에도 워커는 멈추지 않으므로 에폭 경계에서
파이프라인을 다시 채우는 시간도 섞이지 않습니다.

배치를 GPU로 옮기지는 않습니다. 로더가 배치를 내놓는 속도만 재고, 복사는 팁 2에서 잽니다.
"""

import multiprocessing

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
# 라운드 수. 16코어 GPU 컴퓨터에서는 워커 수가 일곱 가지라서 라운드를 줄여 시간을 맞춥니다.
ROUNDS = {"cuda": 3, "cpu": 5, "quick": 1}
# 샘플은 인덱스로 그때그때 만들므로 길이는 공짜입니다. 측정 중에 에폭이 끝나지 않게 길게 둡니다.
ENDLESS = 10**8


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


# 코어보다 워커가 많을 때 torch가 내는 경고입니다. 일부러 코어 수의 두 배까지 재므로 끕니다.
@pytest.mark.measures("throughput")
@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("num_workers", WORKER_COUNTS, ids=lambda n: f"workers{n}")
def test_throughput(measure, size_key, num_workers):
    quick = size_key == "quick"
    before = set(multiprocessing.active_children())
    dataset, batch_size = make_dataset(quick)
    count = batches_per_call(quick)
    loader = build_loader(dataset, num_workers, batch_size)
    assert loader.num_workers == num_workers
    batches = iter(loader)
    try:
        # 워커를 띄우고 한 바퀴를 버립니다. 워커들은 첫 배치를 거의 동시에 내놓기 때문입니다.
        next_batches(batches, max(1, num_workers))
        samples = measure(
            next_batches,
            batches,
            count,
            key=f"workers-{num_workers}",
            group="throughput",
            variant="workers",
            role=role_of(num_workers),
            params={
                "num_workers": num_workers,
                "batch_size": batch_size,
                "cores": CORES,
                "batches": count,
            },  # fmt: skip
            per_call={"samples": count * batch_size},
            ceiling="cores-x-one-worker",
            rounds=ROUNDS[size_key],
        )
        assert samples == count * batch_size
    finally:
        # persistent 워커를 바로 끝내, 다음 측정에 남은 프로세스가 끼지 않게 합니다.
        del batches, loader
    assert set(multiprocessing.active_children()) <= before


@pytest.mark.measures("ceiling")
def test_ceiling(measure, size_key):
    """천장: 워커 하나의 속도 × 코어 수(계산값).

    워커 안에서 PyTorch는 `torch.set_num_threads(1)`을 부르므로 워커 하나는 스레드 하나로 일하고,
    한 번에 코어 수만큼의 워커만 실제로 돌 수 있습니다. 그래서 메인 프로세스를 스레드 하나로 두고
    워커 없는 로더(배치 만들기와 쌓기까지 워커가 하는 일 그대로)의 속도를 잰 다음 코어 수를 곱하면,
    워커를 몇 개 쓰든 넘을 수 없는 위쪽 한계가 됩니다. 잰 것은 스레드 하나의 속도뿐이라서 천장은
    중앙값 없이 계산값으로 기록합니다. 실제로는 이보다 낮습니다: 메인 프로세스도 배치를 받느라
    코어를 쓰고, 모든 코어가 바쁘면 클럭이 내려갑니다.
    """
    dataset, batch_size = make_dataset(size_key == "quick")
    # 스레드 하나의 속도라서 0.2초 남짓이면 충분합니다.
    count = 2 if size_key == "quick" else 4
    batches = iter(tip1.make_slow_loader(dataset, batch_size))
    next_batches(batches, 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        samples = measure(
            next_batches,
            batches,
            count,
            key="one-worker",
            group="ceiling",
            variant="one-worker",
            params={"batch_size": batch_size, "batches": count},
            per_call={"samples": count * batch_size},
            rounds=ROUNDS[size_key],
        )
    finally:
        torch.set_num_threads(threads)
    assert samples == count * batch_size
    if measure.last:
        one_worker = measure.last["metrics"]["samples_per_s"]
        measure.computed(
            key="cores-x-one-worker",
            group="ceiling",
            variant="cores-x-one-worker",
            params={"cores": CORES, "batches": count},
            metrics={"samples_per_s": one_worker * CORES},
        )
