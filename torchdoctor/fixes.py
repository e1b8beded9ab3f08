"""고친 것을 작업의 데이터로 재기: 사이트와 같은 섞인 라운드(torchdoctor/rounds.py)와 같은 판정.

작업이 끝난 뒤에만 돌고, 난수 상태를 재기 전으로 되돌립니다(노트북에서 다음 칸이 같은 수를 보도록).
모든 측정에는 시간 예산이 있습니다.
"""

from __future__ import annotations

import contextlib
import copy
import os
import random
import time

import torch
from torch.utils.data import DataLoader, IterableDataset, SequentialSampler

from torchdoctor import rounds
from torchdoctor.words import ratio_text

ROUND_S = 1.0  # 라운드 하나에서 변형 하나를 재는 시간(대략): 워커를 띄우는 시간이 묻히도록


@contextlib.contextmanager
def rng_kept():
    """안에서 쓴 난수를 밖에서는 쓰지 않은 것처럼: torch, CUDA, random, NumPy의 상태를 되돌립니다."""
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

    샘플러는 새로 만듭니다: 독자의 샘플러나 generator를 돌리면 작업의 데이터 순서가 바뀝니다."""
    dataset = recipe["dataset"]
    settings = {
        "dataset": dataset,
        "collate_fn": recipe["collate_fn"],
        "worker_init_fn": recipe["worker_init_fn"],
        "multiprocessing_context": recipe["multiprocessing_context"],
        "timeout": recipe["timeout"],
        "num_workers": recipe["num_workers"],
        "pin_memory": recipe["pin_memory"],
        "persistent_workers": False,
    }
    if recipe["batch_size"] is not None:
        settings.update(batch_size=recipe["batch_size"], drop_last=recipe["drop_last"],
                        sampler=SequentialSampler(dataset))
    else:
        settings["batch_sampler"] = copy.deepcopy(recipe["batch_sampler"])
    settings.update(changes)
    if settings["num_workers"] == 0:
        settings.pop("multiprocessing_context")
        settings["timeout"] = 0
    else:
        settings["prefetch_factor"] = recipe["prefetch_factor"] or 2
    return DataLoader(**settings)


def batches_per_round(per_batch_s: float, length: int) -> int:
    """라운드 하나가 ROUND_S쯤 걸리도록 읽을 배치 수(로더 한 바퀴를 넘지 않게)."""
    wanted = max(4, int(ROUND_S / max(per_batch_s, 1e-4)))
    return max(1, min(wanted, length))


def fetch_timer(loader: DataLoader, batches: int):
    """새 반복자로 배치 `batches`개를 읽는 시간. 워커를 띄우는 시간도 넣습니다(에폭마다 드는 비용)."""

    def timer() -> float:
        started = time.perf_counter()
        iterator = iter(loader)
        for _ in range(batches):
            next(iterator)
        seconds = time.perf_counter() - started
        del iterator  # 워커를 닫아, 다음 변형을 재는 동안 미리 읽어 두지 못하게 합니다
        return seconds

    return timer


def candidate_workers(current: int) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(cores or 1, current + 1) if current < (cores or 1) else current * 2


def measure_loader(recipe: dict | None, ev: dict, budget_s: float, seed: int = 0) -> dict:
    """독자의 로더와, 워커를 더 둔(CUDA면 pin_memory도 켠) 로더로 배치를 읽는 시간을 섞인 라운드로 잽니다."""
    if recipe is None:
        return {"skipped": "로더를 다시 만들 재료가 없습니다"}
    if isinstance(recipe["dataset"], IterableDataset):
        return {"skipped": "IterableDataset은 다시 읽으면 작업의 흐름을 바꿀 수 있어 재지 않았습니다"}
    info = ev["loader"]
    workers = candidate_workers(info["num_workers"])
    changes = {"num_workers": workers}
    if ev.get("device") == "cuda":
        changes["pin_memory"] = True
    per_batch = info["window_s"] / max(info["window_batches"], 1)
    with rng_kept():
        baseline = loader_like(recipe)
        candidate = loader_like(recipe, **changes)
        try:
            length = len(baseline)
        except TypeError:
            return {"skipped": "로더의 길이를 알 수 없어 재지 않았습니다"}
        batches = batches_per_round(per_batch, length)
        timers = {"reader": fetch_timer(baseline, batches), "candidate": fetch_timer(candidate, batches)}
        plan = rounds.Plan(min_rounds=7, max_rounds=60, budget_s=budget_s)
        record = rounds.interleave(timers, baseline="reader", plan=plan, seed=seed,
                                   work={"reader": batches, "candidate": batches})
    interval = record.interval("candidate")
    what = f"워커 {info['num_workers']}개 → {workers}개"
    if "pin_memory" in changes:
        what += ", pin_memory=True"
    return {
        "what": what,
        "ratio": round(interval.median, 4),
        "low": round(interval.low, 4),
        "high": round(interval.high, 4),
        "confidence": round(interval.confidence, 4),
        "verdict": interval.verdict,
        "text": ratio_text(interval),
        "rounds": record.rounds,
        "batches_per_round": batches,
        "seconds": round(record.elapsed_s, 2),
        "code": f"DataLoader(..., num_workers={workers}, persistent_workers=True"
        + (", pin_memory=True)" if "pin_memory" in changes else ")"),
    }


def measure_input_bound(step, loader, *, model, optimizer, budget_s: float = 10.0, seed: int = 0):
    """독자의 스텝 함수 step(batch)를 로더에서 새로 읽은 배치와, 미리 읽어 둔 같은 배치로 잽니다.

    비율이 1보다 크면 입력이 없을 때 스텝이 그만큼 빨라집니다(입력 병목). 재는 동안 모델과 옵티마이저가
    바뀌므로 재기 전 상태(state_dict)와 난수 상태를 되돌립니다."""
    model_state = copy.deepcopy(model.state_dict())
    optimizer_state = copy.deepcopy(optimizer.state_dict())
    grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    try:
        with rng_kept():
            iterator = [iter(loader)]
            cached = next(iterator[0])

            def fresh() -> float:
                started = time.perf_counter()
                try:
                    batch = next(iterator[0])
                except StopIteration:
                    iterator[0] = iter(loader)
                    batch = next(iterator[0])
                step(batch)
                return time.perf_counter() - started

            def from_cache() -> float:
                started = time.perf_counter()
                step(cached)
                return time.perf_counter() - started

            plan = rounds.Plan(min_rounds=7, max_rounds=100, budget_s=budget_s)
            record = rounds.interleave({"loader": fresh, "cached": from_cache}, baseline="loader",
                                       plan=plan, seed=seed)
            del iterator
    finally:
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
        for parameter, grad in zip(model.parameters(), grads, strict=True):
            parameter.grad = grad
    interval = record.interval("cached")
    return {
        "what": "로더에서 읽은 배치 대 미리 읽어 둔 같은 배치",
        "ratio": round(interval.median, 4),
        "low": round(interval.low, 4),
        "high": round(interval.high, 4),
        "confidence": round(interval.confidence, 4),
        "verdict": interval.verdict,
        "text": ratio_text(interval),
        "rounds": record.rounds,
        "input_bound": interval.verdict == "faster",
    }
