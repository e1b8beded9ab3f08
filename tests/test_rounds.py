"""torchdoctor/rounds.py의 테스트: 섞인 라운드와 멈춤 규칙(이슈 40). 시간은 합성한 값입니다."""

from __future__ import annotations

import math
import random

import pytest

from torchdoctor import rounds, stats


def simulated_timers(true_ratio: float, noise_sd: float, seed: int) -> dict:
    """기준은 1초, 변형은 1/true_ratio초에 라운드마다 로그 정규 흔들림이 붙습니다."""
    rng = random.Random(seed)
    return {
        "baseline": lambda: math.exp(rng.gauss(0, noise_sd)),
        "variant": lambda: math.exp(rng.gauss(0, noise_sd)) / true_ratio,
    }


def faster_share(true_ratio: float, noise_sd: float, trials: int) -> tuple[float, float]:
    """참값이 true_ratio일 때 "빨라짐"으로 판정한 비율과 평균 라운드 수."""
    plan = rounds.Plan(min_rounds=9, max_rounds=300, budget_s=1e9)
    faster, total = 0, 0
    for trial in range(trials):
        timers = simulated_timers(true_ratio, noise_sd, seed=trial)
        record = rounds.interleave(timers, baseline="baseline", plan=plan, seed=trial)
        faster += record.interval("variant").verdict == "faster"
        total += record.rounds
    return faster / trials, total / trials


WIDTH_ONLY = stats.precise_enough


def old_settled(interval: stats.Interval, target: float = stats.TARGET_HALF_WIDTH) -> bool:
    """이슈 40 이전의 규칙: 폭에 더해 판정 경계를 걸치지 않을 때까지 잽니다(선택적 멈춤)."""
    straddles = any(interval.low <= edge <= interval.high for edge in stats.NO_CHANGE_BAND)
    return WIDTH_ONLY(interval, target) and not straddles


@pytest.mark.parametrize("noise_sd", [0.03, 0.08])
def test_a_true_ratio_on_the_band_edge_reads_faster_no_more_than_a_95_percent_interval_allows(
    noise_sd, monkeypatch
):
    # 참값이 정확히 1.05이면 "빨라짐"은 구간 전체가 참값보다 위, 곧 한쪽으로 놓친 것입니다.
    # 양쪽 95% 구간은 한쪽으로 2.5%까지 놓칩니다. 600번이면 표준오차가 0.6%p라 4%를 한도로 둡니다.
    share, mean_rounds = faster_share(1.05, noise_sd, trials=600)
    assert share <= 0.04, (share, mean_rounds)
    # 같은 시뮬레이션이 옛 규칙의 잘못은 잡아내는지(이 테스트가 실패할 수 있는지) 확인합니다.
    monkeypatch.setattr(stats, "precise_enough", old_settled)
    old_share, old_rounds = faster_share(1.05, noise_sd, trials=200)  # 옛 규칙은 라운드가 많아 적게
    assert old_share >= 0.08 and old_rounds > 3 * mean_rounds, (old_share, old_rounds)


def test_rounds_stop_once_every_interval_is_narrow():
    timers = simulated_timers(2.0, 0.01, seed=1)
    record = rounds.interleave(timers, baseline="baseline", plan=rounds.Plan(), seed=1)
    assert record.rounds == 9  # 흔들림 1%: 최소 라운드에서 이미 ±5% 안입니다
    assert record.interval("variant").verdict == "faster"
    assert record.width() <= stats.TARGET_HALF_WIDTH


def test_a_noisy_pair_runs_to_the_round_limit_and_records_the_width_it_reached():
    timers = simulated_timers(1.0, 0.5, seed=2)
    plan = rounds.Plan(min_rounds=9, max_rounds=40, budget_s=1e9)
    record = rounds.interleave(timers, baseline="baseline", plan=plan, seed=2)
    assert record.rounds == 40 and record.width() > stats.TARGET_HALF_WIDTH


def test_every_variant_runs_once_per_round_in_the_seeded_order():
    calls: list[str] = []
    timers = {key: (lambda key=key: calls.append(key) or 1.0) for key in ("a", "b", "c")}
    plan = rounds.Plan(min_rounds=3, max_rounds=3)
    rounds.interleave(timers, baseline="a", plan=plan, seed=5)
    expected = [key for r in range(3) for key in stats.round_order(["a", "b", "c"], 5, r)]
    assert calls == expected


def test_an_expensive_variant_stops_at_its_own_round_limit():
    timers = {"a": lambda: 1.0, "b": lambda: 0.5, "slow": lambda: 2.0}
    plan = rounds.Plan(min_rounds=9, max_rounds=12)
    record = rounds.interleave(timers, baseline="a", plan=plan, seed=0, max_rounds_of={"slow": 3})
    assert len(record.seconds["slow"]) == 3 and len(record.seconds["b"]) == 9


def test_ratios_are_per_unit_of_work():
    # 변형이 호출 한 번에 일을 두 배 하면 같은 시간이어도 두 배 빠릅니다.
    timers = {"a": lambda: 1.0, "b": lambda: 1.0}
    plan = rounds.Plan(min_rounds=9, max_rounds=9)
    record = rounds.interleave(timers, baseline="a", plan=plan, seed=0, work={"b": 2.0})
    assert record.interval("b").median == pytest.approx(2.0)
