"""섞인 라운드로 재기: 라운드 하나에서 모든 변형을 한 번씩, 라운드마다 시드로 섞은 순서로 잽니다.

느린 흐름(온도, 다른 프로그램의 부하)은 한 라운드 안의 모든 변형이 함께 겪으므로, 라운드마다의
짝 비율로 판정합니다(torchdoctor/stats.py). 멈춤은 정밀도(구간 폭)와 시간 예산으로만 정합니다.
사이트의 벤치마크(measuring/interleave.py)와 torchdoctor가 이 함수 하나를 씁니다.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from torchdoctor import stats


@dataclass(frozen=True)
class Plan:
    """라운드를 몇 번, 얼마 동안 돌지."""

    min_rounds: int = 9
    max_rounds: int = 300
    budget_s: float = 10.0
    target: float = stats.TARGET_HALF_WIDTH


@dataclass
class Rounds:
    """섞인 라운드의 기록: 변형마다 라운드별 시간(호출 한 번)과 일의 양."""

    seed: int
    baseline: str | None
    work: dict[str, float]
    seconds: dict[str, list[float]] = field(default_factory=dict)
    rounds: int = 0
    elapsed_s: float = 0.0

    def per_work(self, key: str) -> list[float]:
        return [s / self.work.get(key, 1.0) for s in self.seconds[key]]

    def interval(self, key: str, against: str | None = None) -> stats.Interval:
        """key의 속도를 against(기본: 기준)와 라운드마다 짝지은 비율의 구간."""
        ratios = stats.paired_ratios(self.per_work(against or self.baseline), self.per_work(key))
        return stats.median_interval(ratios)

    def compared(self) -> list[str]:
        """기준과 견줄 수 있는 변형(두 라운드 이상 잰 것)."""
        if self.baseline is None:
            return []
        return [k for k, s in self.seconds.items() if k != self.baseline and len(s) > 1]

    def width(self) -> float | None:
        widths = [stats.half_width(self.interval(key)) for key in self.compared()]
        return round(max(widths), 4) if widths else None


def interleave(
    timers: dict[str, Callable[[], float]],
    *,
    baseline: str | None,
    plan: Plan,
    seed: int,
    work: dict[str, float] | None = None,
    max_rounds_of: dict[str, int] | None = None,
) -> Rounds:
    """timers[key]()는 변형을 한 번 돌리고 호출 한 번의 초를 돌려줍니다.

    max_rounds_of: 라운드 하나가 아주 비싼 변형은 그 수까지만 잽니다(다른 변형은 계속)."""
    record = Rounds(seed, baseline, dict(work or {}), {key: [] for key in timers})
    limits = max_rounds_of or {}
    started = time.monotonic()
    while True:
        for key in stats.round_order(list(timers), seed, record.rounds):
            if record.rounds < limits.get(key, plan.max_rounds):
                record.seconds[key].append(timers[key]())
        record.rounds += 1
        record.elapsed_s = time.monotonic() - started
        if _done(record, plan, limits):
            return record


def _done(record: Rounds, plan: Plan, limits: dict[str, int]) -> bool:
    if record.rounds >= plan.max_rounds:
        return True
    if record.rounds < plan.min_rounds:
        return False
    if record.elapsed_s > plan.budget_s:
        return True
    still = [k for k in record.compared() if record.rounds < limits.get(k, plan.max_rounds)]
    return all(stats.precise_enough(record.interval(key), plan.target) for key in still)
