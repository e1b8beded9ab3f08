"""섞인 라운드로 재기: 라운드 하나에서 묶음의 모든 변형을 한 번씩, 라운드마다 다른 순서로 잽니다.

pytest-benchmark가 여전히 재는 도구이자 변형마다의 통계를 담는 곳입니다. 변형마다 테스트의
`benchmark` 준비물을 복제해 그 도구의 실행기(runner)로 시간을 재고, 그 도구의 통계(Metadata)에
라운드를 쌓습니다. 그래서 `--benchmark-json`과 `--benchmark-compare`가 변형마다 그대로 동작합니다.
이 모듈은 pytest-benchmark의 내부(_make_runner, _calibrate_timer, _make_stats 등)에 기대는 유일한
곳입니다: 각 변형을 워밍업하고 반복 횟수를 정한 다음, 라운드는 torchdoctor/rounds.py가 돌립니다
(시드로 섞은 순서, 구간 폭이나 시간 예산으로 멈춤).
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from measuring import memory
from torchdoctor import rounds, stats


@dataclass
class Settings:
    """묶음 하나를 재는 방법. plugin이 장치와 모드(드라이 런 등)에 맞춰 만듭니다."""

    min_rounds: int = 9
    max_rounds: int = 300
    budget_s: float = 10.0
    target: float = stats.TARGET_HALF_WIDTH
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


def stable_seed(*parts) -> int:
    """실행의 시드와 묶음 이름에서 묶음마다의 시드를 만듭니다(같은 입력이면 같은 시드)."""
    return zlib.crc32(":".join(map(str, parts)).encode())


# 이 모듈이 쓰는 pytest-benchmark의 비공개 이름. 판이 바뀌어 하나라도 없어지면
# tests/test_pytest_benchmark_internals.py가 그 이름을 대며 실패합니다.
FIXTURE_INTERNALS = ("_make_runner", "_calibrate_timer", "_make_stats", "_min_time", "_mode",
                     "_warmup", "_cleanup_callbacks")  # fmt: skip


def claim(benchmark) -> None:
    """변형마다 복제해 쓰므로, 원래 준비물을 안 썼다고 pytest-benchmark가 경고하지 않게 합니다."""
    benchmark._mode = "interleaved"


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


def interval(baseline: Timed, item: Timed) -> stats.Interval:
    ratios = stats.paired_ratios(baseline.per_work(), item.per_work())
    return stats.median_interval(ratios)


def _timer(item: Timed) -> Callable[[], float]:
    def once() -> float:
        _call(item)
        duration = item._runner(item._loops)
        item._metadata.update(duration)  # pytest-benchmark의 통계에도 라운드를 쌓습니다
        return duration / item.iterations

    return once


def run_rounds(items: list[Timed], baseline: Timed | None, settings: Settings, seed: int) -> dict:
    """섞인 라운드를 돌리고(torchdoctor/rounds.py) 묶음의 기록(시드, 라운드 수, 도달한 폭, 걸린
    시간)을 돌려줍니다."""
    plan = rounds.Plan(settings.min_rounds, settings.max_rounds, settings.budget_s, settings.target)
    if settings.dry_run:
        plan = rounds.Plan(min_rounds=1, max_rounds=1)
    record = rounds.interleave(
        {item.key: _timer(item) for item in items},
        baseline=baseline.key if baseline else None,
        plan=plan,
        seed=seed,
        work={item.key: item.work for item in items},
        max_rounds_of={item.key: item.max_rounds for item in items if item.max_rounds is not None},
    )
    for item in items:
        item.seconds = record.seconds[item.key]
    return {
        "seed": seed,
        "rounds": record.rounds,
        "seconds": round(record.elapsed_s, 2),
        "width": record.width(),
        "target": settings.target,
    }
