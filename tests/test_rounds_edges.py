"""torchdoctor/rounds.py의 경계: 견줄 변형, 구간 폭의 자릿수, 시간 예산과 정밀도 목표로 멈추기.
시간은 가짜 시계로 정합니다(이 컴퓨터의 속도와 무관합니다)."""

from __future__ import annotations

import itertools
import types

import pytest

from torchdoctor import rounds, stats


def record(baseline="a", **seconds) -> rounds.Rounds:
    return rounds.Rounds(seed=0, baseline=baseline, work={}, seconds=dict(seconds))


def test_only_variants_measured_in_two_rounds_or_more_are_compared_with_the_baseline():
    assert record(a=[1, 1], b=[1, 1], c=[1]).compared() == ["b"]
    assert record(baseline=None, a=[1, 1], b=[1, 1]).compared() == []
    assert record(baseline=None, a=[1, 1], b=[1, 1]).width() is None
    assert record(a=[1, 1]).width() is None  # 기준 하나뿐이면 잴 폭이 없습니다


def test_the_width_is_the_widest_half_width_rounded_to_four_places():
    ratios = [0.9, 0.95, 1.0, 1.0, 1.0, 1.0, 1.0, 1.123456, 1.2]  # 9라운드 구간: 2번째와 8번째
    result = record(a=[1.0] * 9, b=[1 / r for r in ratios])
    assert result.interval("b").median == pytest.approx(1.0)
    assert result.width() == 0.1235


def test_a_ratio_can_be_taken_against_another_variant_and_per_unit_of_work():
    result = rounds.Rounds(0, "a", {"c": 4.0}, {"a": [2.0] * 3, "b": [1.0] * 3, "c": [2.0] * 3})
    assert result.per_work("a") == [2.0] * 3  # 일의 양을 적지 않은 변형은 호출 한 번이 일 하나
    assert result.per_work("c") == [0.5] * 3
    assert result.interval("b").median == pytest.approx(2.0)
    assert result.interval("c", against="b").median == pytest.approx(2.0)


def test_the_record_keeps_the_seed_baseline_and_work_it_was_run_with():
    timers = {"a": lambda: 1.0, "b": lambda: 0.5}
    plan = rounds.Plan(min_rounds=2, max_rounds=2)
    result = rounds.interleave(timers, baseline="a", plan=plan, seed=7, work={"b": 2.0})
    assert (result.seed, result.baseline, result.work, result.rounds) == (7, "a", {"b": 2.0}, 2)
    assert result.seconds == {"a": [1.0, 1.0], "b": [0.5, 0.5]}


def fake_clock(monkeypatch) -> list[float]:
    """호출 한 번마다 1초씩 가는 시계(처음은 1000초: 0에서 시작한다고 가정하지 않습니다)."""
    now = [1000.0]
    monkeypatch.setattr(rounds, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_rounds_stop_after_the_round_that_passes_the_time_budget(monkeypatch):
    now = fake_clock(monkeypatch)
    swing = itertools.cycle([0.5, 2.0])  # 비율이 2와 0.5를 오가: 구간이 좁아지지 않습니다

    def timed(seconds):
        now[0] += 1.0
        return seconds

    timers = {"a": lambda: timed(1.0), "b": lambda: timed(next(swing))}
    plan = rounds.Plan(min_rounds=3, max_rounds=100, budget_s=12.0)
    result = rounds.interleave(timers, baseline="a", plan=plan, seed=0)
    # 라운드마다 2초: 6라운드에 12초(예산과 같음)이고 7라운드에 넘습니다.
    assert (result.rounds, result.elapsed_s) == (7, 14.0)


def test_the_budget_does_not_cut_the_minimum_rounds(monkeypatch):
    fake_clock(monkeypatch)
    timers = {"a": lambda: 1.0, "b": lambda: 1.0}
    plan = rounds.Plan(min_rounds=5, max_rounds=100, budget_s=-1.0)
    assert rounds.interleave(timers, baseline="a", plan=plan, seed=0).rounds == 5


@pytest.mark.parametrize(("target", "expected_rounds"), [(0.2, 9), (0.05, 30)])
def test_rounds_stop_when_the_interval_is_within_the_plans_target(target, expected_rounds):
    # 비율이 0.9, 1.0, 1.1을 돕니다: 구간이 중앙값의 ±10%에 머뭅니다.
    speeds = itertools.cycle([0.9, 1.0, 1.1])
    timers = {"a": lambda: 1.0, "b": lambda: 1 / next(speeds)}
    plan = rounds.Plan(min_rounds=9, max_rounds=30, budget_s=1e9, target=target)
    result = rounds.interleave(timers, baseline="a", plan=plan, seed=0)
    assert result.rounds == expected_rounds
    assert result.width() == pytest.approx(0.1)
    assert stats.precise_enough(result.interval("b"), target) is (target > 0.1)
