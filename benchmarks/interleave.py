"""섞인 라운드로 재기: 라운드 하나에서 묶음의 모든 변형을 한 번씩, 라운드마다 다른 순서로 잽니다.

pytest-benchmark가 여전히 재는 도구이자 변형마다의 통계를 담는 곳입니다. 변형마다 테스트의
`benchmark` 준비물을 복제해 그 도구의 실행기(runner)로 시간을 재고, 그 도구의 통계(Metadata)에
라운드를 쌓습니다. 그래서 `--benchmark-json`과 `--benchmark-compare`가 변형마다 그대로 동작합니다.
이 모듈은 순서만 정합니다: 각 변형을 워밍업하고 반복 횟수를 정한 다음, 라운드마다 시드에서 정한
순서대로 한 번씩 돌리고, 모든 짝 비율의 구간이 목표 폭에 닿고 판정의 경계를 걸치지 않거나 시간
예산을 다 쓰면 멈춥니다.
"""

from __future__ import annotations

import copy
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks import memory, stats


@dataclass
class Settings:
    """묶음 하나를 재는 방법. plugin이 장치와 모드(드라이 런 등)에 맞춰 만듭니다."""

    min_rounds: int = 9
    max_rounds: int = 300
    budget_s: float = 10.0
    target: float = stats.TARGET_HALF_WIDTH
    warmup: bool = True
    memory: bool = True
    dry_run: bool = False


@dataclass
class Timed:
    """변형 하나를 재는 상태: pytest-benchmark의 실행기와 통계, 그리고 라운드별 시간."""

    key: str
    fn: Callable
    args: tuple
    before_round: Callable[[], object] | None = None
    max_rounds: int | None = None
    memory: bool = True
    work: float = 1.0  # 호출 한 번의 일(토큰, 샘플…). 비율은 일 하나당 시간으로 냅니다.
    output: object = None
    iterations: int = 1
    seconds: list[float] = field(default_factory=list)  # 라운드마다 호출 한 번의 시간
    peak_mib: float | None = None
    _runner: Callable | None = None
    _loops: range | None = None
    _metadata: object = None

    def per_work(self) -> list[float]:
        return [s / self.work for s in self.seconds]

    def active(self, round_index: int) -> bool:
        return self.max_rounds is None or round_index < self.max_rounds


def stable_seed(*parts) -> int:
    """실행의 시드와 묶음 이름에서 묶음마다의 시드를 만듭니다(같은 입력이면 같은 시드)."""
    return zlib.crc32(":".join(map(str, parts)).encode())


def clone_fixture(benchmark, key: str, group: str, extra: dict):
    """테스트의 benchmark 준비물을 변형 하나를 위해 복제합니다(설정, 타이머, 통계 저장소 공유)."""
    clone = copy.copy(benchmark)
    clone.name = key
    clone.fullname = f"{benchmark.fullname}::{key}"
    clone.param, clone.params = key, {"variant": key}
    clone.group, clone.extra_info = group, dict(extra)
    clone.stats, clone._mode, clone._cleanup_callbacks = None, "interleaved", []
    clone._warmup = 0  # 워밍업은 아래 prepare가 합니다(느린 호출을 여러 번 되풀이하지 않게).
    return clone


def _call(item: Timed) -> None:
    if item.before_round:
        item.before_round()


def prepare(item: Timed, fixture, settings: Settings, device) -> None:
    """출력을 받고 워밍업하고, 메모리를 재고, 라운드가 min_time 이상이 되는 반복 횟수를 정합니다."""
    _call(item)
    runner = fixture._make_runner(item.fn, item.args, {})
    first, item.output = runner(None)  # 첫 호출: 출력을 받고 지연 초기화를 치릅니다.
    if settings.memory and item.memory:
        _call(item)
        item.peak_mib = memory.peak_mib(lambda: item.fn(*item.args), device)
    if settings.dry_run or first >= fixture._min_time:
        iterations, loops = 1, range(1)
    else:
        _call(item)
        _, iterations, loops = fixture._calibrate_timer(runner)
    item._runner, item._loops, item.iterations = runner, loops, iterations
    item._metadata = fixture._make_stats(iterations)


def _interval(baseline: Timed, item: Timed) -> stats.Interval:
    ratios = stats.paired_ratios(baseline.per_work(), item.per_work())
    return stats.median_interval(ratios)


def _done(items, baseline, settings, rounds, started) -> bool:
    if settings.dry_run:
        return True
    if rounds >= settings.max_rounds:
        return True
    if rounds < settings.min_rounds:
        return False
    if time.monotonic() - started > settings.budget_s:
        return True
    compared = [i for i in items if baseline and i is not baseline and i.active(rounds)]
    return all(stats.settled(_interval(baseline, i), settings.target) for i in compared)


def run_rounds(items: list[Timed], baseline: Timed | None, settings: Settings, seed: int) -> dict:
    """섞인 라운드를 돌리고 묶음의 기록(시드, 라운드 수, 도달한 폭, 걸린 시간)을 돌려줍니다."""
    started, rounds = time.monotonic(), 0
    keys = {item.key: item for item in items}
    while True:
        for key in stats.round_order(list(keys), seed, rounds):
            item = keys[key]
            if not item.active(rounds):
                continue
            _call(item)
            duration = item._runner(item._loops)
            item._metadata.update(duration)
            item.seconds.append(duration / item.iterations)
        rounds += 1
        if _done(items, baseline, settings, rounds, started):
            break
    widths = [
        stats.half_width(_interval(baseline, item))
        for item in items
        if baseline and item is not baseline and len(item.seconds) > 1
    ]
    return {
        "seed": seed,
        "rounds": rounds,
        "seconds": round(time.monotonic() - started, 2),
        "width": round(max(widths), 4) if widths else None,
        "target": settings.target,
    }


def interval(baseline: Timed, item: Timed) -> stats.Interval:
    return _interval(baseline, item)
