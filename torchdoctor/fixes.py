"""고친 것을 작업의 데이터로 재기: 사이트와 같은 섞인 라운드(torchdoctor/rounds.py)와 같은 판정.

작업이 끝난 뒤에만 돌고, 난수 상태를 재기 전으로 되돌립니다(노트북에서 다음 칸이 같은 수를 보도록).
모든 측정에는 시간 예산이 있습니다.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import random
import statistics
import time

import torch
from torch.utils.data import DataLoader, IterableDataset, SequentialSampler

from torchdoctor import rounds
from torchdoctor.words import ratio_text

ROUND_S = 0.5  # 라운드 하나에서 변형 하나를 재는 시간(대략)


@contextlib.contextmanager
def rng_kept():
    """안에서 쓴 난수를 밖에서는 쓰지 않은 것처럼 합니다.

    torch, CUDA, random, NumPy의 상태를 되돌립니다."""
    torch_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    python_state = random.getstate()
    try:
        import numpy
    except ImportError:
        numpy = None
    numpy_state = numpy.random.get_state() if numpy is not None else None
    try:
        yield
    finally:
        torch.set_rng_state(torch_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        random.setstate(python_state)
        if numpy is not None:
            numpy.random.set_state(numpy_state)


def loader_like(recipe: dict, **changes) -> DataLoader:
    """독자의 로더와 같은 데이터셋, 배치, collate로 새 로더를 만듭니다(설정 몇 개만 바꿔서).

    샘플러는 새로 만듭니다: 독자의 샘플러나 generator를 돌리면 작업의 데이터 순서가 바뀝니다.
    워커가 있으면 `persistent_workers=True`로 만듭니다: 라운드마다 워커를 다시 띄우지 않고
    한 번 띄운 워커의 배치 속도(정상 상태)를 잽니다."""
    dataset = recipe["dataset"]
    settings = {
        "dataset": dataset,
        "collate_fn": recipe["collate_fn"],
        "worker_init_fn": recipe["worker_init_fn"],
        "multiprocessing_context": recipe["multiprocessing_context"],
        "timeout": recipe["timeout"],
        "num_workers": recipe["num_workers"],
        "pin_memory": recipe["pin_memory"],
    }
    if recipe["batch_size"] is not None:
        settings.update(
            batch_size=recipe["batch_size"],
            drop_last=recipe["drop_last"],
            sampler=SequentialSampler(dataset),
        )
    else:
        settings["batch_sampler"] = copy.deepcopy(recipe["batch_sampler"])
    settings.update(changes)
    if settings["num_workers"] == 0:
        settings.pop("multiprocessing_context")
        settings["timeout"] = 0
    else:
        settings["prefetch_factor"] = recipe["prefetch_factor"] or 2
        settings["persistent_workers"] = True
    return DataLoader(**settings)


def batches_per_round(per_batch_s: float, length: int) -> int:
    """라운드 하나가 ROUND_S쯤 걸리도록 읽을 배치 수(로더 한 바퀴를 넘지 않게)."""
    wanted = max(4, int(ROUND_S / max(per_batch_s, 1e-4)))
    return max(1, min(wanted, length))


class FreshBatches:
    """로더 하나에서 끝없이 배치를 읽습니다: 한 바퀴가 끝나면 새 바퀴를 엽니다.

    반복자는 처음 읽을 때 엽니다. persistent_workers인 로더는 새 바퀴에서도 워커를 그대로 씁니다."""

    def __init__(self, loader):
        self.loader = loader
        self.iterator = None

    def next(self):
        if self.iterator is None:
            self.iterator = iter(self.loader)
        try:
            return next(self.iterator)
        except StopIteration:
            self.iterator = iter(self.loader)
            return next(self.iterator)

    def close(self) -> None:
        self.iterator = None  # 워커를 닫습니다(persistent_workers가 아닐 때)


class BatchStream(FreshBatches):
    """라운드 전에 워커를 한 번 띄우고, 그 시간(첫 배치가 올 때까지)을 start_s에 둡니다."""

    start_s = 0.0

    def start(self) -> None:
        started = time.perf_counter()
        self.next()
        self.start_s = time.perf_counter() - started

    def queued(self) -> int:
        """워커가 미리 읽어 둘 수 있는 배치 수(워커 × prefetch_factor, 워커가 없으면 0)."""
        workers = self.loader.num_workers
        return workers * (self.loader.prefetch_factor or 0) if workers else 0


def fetch_timer(stream: BatchStream, batches: int):
    """이미 띄운 워커로 배치 `batches`개를 읽는 시간(정상 상태).

    재기 전에 워커가 미리 읽어 둔 배치를 재지 않고 비웁니다: 다른 변형을 재는 동안 쌓아 둔 배치를
    공짜로 받지 않게 합니다."""

    def timer() -> float:
        for _ in range(stream.queued()):
            stream.next()
        started = time.perf_counter()
        for _ in range(batches):
            stream.next()
        return time.perf_counter() - started

    return timer


def candidate_workers(current: int) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(cores or 1, current + 1) if current < (cores or 1) else current * 2


def candidate_changes(info: dict, device: str | None) -> dict:
    """견줄 로더의 설정: 워커를 더 두고, CUDA에서만 pin_memory를 켭니다(CPU에서는 뜻이 없습니다)."""
    changes = {"num_workers": candidate_workers(info["num_workers"])}
    if device == "cuda":
        changes["pin_memory"] = True
    return changes


def payback_batches(start_s: float, reader_s: float, candidate_s: float) -> int | None:
    """워커를 띄우는 한 번의 비용을 배치 몇 개면 되찾는지(빨라지지 않으면 None)."""
    saved = reader_s - candidate_s
    if saved <= 0:
        return None
    return max(1, math.ceil(round(start_s / saved, 6)))  # 0.1/0.02가 5.000…1로 올림되지 않게


def fix_code(changes: dict) -> str:
    code = f"DataLoader(..., num_workers={changes['num_workers']}, persistent_workers=True"
    return code + (", pin_memory=True)" if changes.get("pin_memory") else ")")


def interval_fields(interval) -> dict:
    return {
        "ratio": round(interval.median, 4),
        "low": round(interval.low, 4),
        "high": round(interval.high, 4),
        "confidence": round(interval.confidence, 4),
        "verdict": interval.verdict,
        "text": ratio_text(interval),
    }


def time_streams(streams: dict, batches: int, budget_s: float, seed: int):
    """두 로더를 한 번씩 띄운 뒤 섞인 라운드로 배치 `batches`개씩 잽니다."""
    for stream in streams.values():
        stream.start()
    timers = {key: fetch_timer(stream, batches) for key, stream in streams.items()}
    plan = rounds.Plan(min_rounds=7, max_rounds=60, budget_s=budget_s)
    work = {key: batches for key in streams}
    return rounds.interleave(timers, baseline="reader", plan=plan, seed=seed, work=work)


def measure_loader(recipe: dict | None, ev: dict, budget_s: float, seed: int = 0) -> dict:
    """독자의 로더와, 워커를 더 둔(CUDA면 pin_memory도 켠) 로더로 배치를 읽는 시간을
    섞인 라운드로 잽니다.

    워커는 라운드 전에 한 번 띄우고(persistent_workers), 라운드마다 배치 N개의 정상 상태 속도를
    잽니다. 워커를 띄우는 한 번의 비용은 따로(start_s, 되찾는 배치 수) 알립니다."""
    if recipe is None:
        return {"skipped": "로더를 다시 만들 재료가 없습니다"}
    if isinstance(recipe["dataset"], IterableDataset):
        return {
            "skipped": "IterableDataset은 다시 읽으면 작업의 흐름을 바꿀 수 있어 재지 않았습니다"
        }
    info = ev["loader"]
    changes = candidate_changes(info, ev.get("device"))
    per_batch = info["window_s"] / max(info["window_batches"], 1)
    with rng_kept():
        streams = {
            "reader": BatchStream(loader_like(recipe)),
            "candidate": BatchStream(loader_like(recipe, **changes)),
        }
        try:
            length = len(streams["reader"].loader)
        except TypeError:
            return {"skipped": "로더의 길이를 알 수 없어 재지 않았습니다"}
        batches = batches_per_round(per_batch, length)
        try:
            record = time_streams(streams, batches, budget_s, seed)
        finally:
            for stream in streams.values():
                stream.close()
    return loader_result(info, changes, record, streams, batches)


def loader_result(info: dict, changes: dict, record, streams: dict, batches: int) -> dict:
    what = f"워커 {info['num_workers']}개 → {changes['num_workers']}개"
    if changes.get("pin_memory"):
        what += ", pin_memory=True"
    reader_s = statistics.median(record.per_work("reader"))
    candidate_s = statistics.median(record.per_work("candidate"))
    start_s = streams["candidate"].start_s
    return {
        "what": what + f", 배치 {batches}개씩 정상 상태",
        **interval_fields(record.interval("candidate")),
        "rounds": record.rounds,
        "batches_per_round": batches,
        "seconds": round(record.elapsed_s, 2),
        "start_s": round(start_s, 4),
        "payback_batches": payback_batches(start_s, reader_s, candidate_s),
        "code": fix_code(changes),
    }


def step_timer(step, batch_of):
    """batch_of()로 배치를 얻어 step(batch)를 도는 시간(배치를 얻는 시간 포함)."""

    def timer() -> float:
        started = time.perf_counter()
        step(batch_of())
        return time.perf_counter() - started

    return timer


def measure_input_bound(step, loader, *, model, optimizer, budget_s: float = 10.0, seed: int = 0):
    """독자의 스텝 함수 step(batch)를 로더에서 새로 읽은 배치와, 미리 읽어 둔 같은 배치로 잽니다.

    비율이 1보다 크면 입력이 없을 때 스텝이 그만큼 빨라집니다(입력 병목). 재는 동안 모델과
    옵티마이저가 바뀌므로 재기 전 상태(state_dict)와 난수 상태를 되돌립니다."""
    model_state = copy.deepcopy(model.state_dict())
    optimizer_state = copy.deepcopy(optimizer.state_dict())
    grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    fresh = FreshBatches(loader)
    try:
        with rng_kept():
            cached = fresh.next()
            timers = {
                "loader": step_timer(step, fresh.next),
                "cached": step_timer(step, lambda: cached),
            }
            plan = rounds.Plan(min_rounds=7, max_rounds=100, budget_s=budget_s)
            record = rounds.interleave(timers, baseline="loader", plan=plan, seed=seed)
    finally:
        fresh.close()
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
        for parameter, grad in zip(model.parameters(), grads, strict=True):
            parameter.grad = grad
    interval = record.interval("cached")
    return {
        "what": "로더에서 읽은 배치 대 미리 읽어 둔 같은 배치",
        **interval_fields(interval),
        "rounds": record.rounds,
        "input_bound": interval.verdict == "faster",
    }
