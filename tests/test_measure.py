"""measuring/interleave.py와 measuring/measure.py의 테스트(이슈 17, P11). 라운드는 rounds.py.

시간은 재지 않습니다. 가짜 실행기가 정해 둔 시간을 돌려주고 가상 시계를 그만큼 움직여, 섞인 순서,
멈추는 조건(±5%, 시간 예산, 최대 라운드), 짝 비율과 "앞 단계 대비"를 정확한 값으로 확인합니다.
이름 검사(레지스트리에 없는 묶음·변형)는 시간을 재지 않는 평소 pytest에서도 멈추는지 봅니다.
"""

from __future__ import annotations

import itertools
import types
import zlib

import pytest
import torch

from guide import registry
from measuring import interleave, measure
from measuring import session as measurement
from results_format import validation
from torchdoctor import rounds, stats


class Clock:
    """가상 시계: 실행기가 돌려준 시간만큼 움직입니다."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeStats:
    """pytest-benchmark의 통계(Metadata) 대신: 넘겨받은 라운드 시간을 모읍니다."""

    def __init__(self):
        self.durations = []

    def update(self, duration):
        self.durations.append(duration)


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(rounds.time, "monotonic", fake)
    return fake


def fake_item(key, durations, log, clock, **fields):
    """라운드마다 durations의 다음 값을 돌려주는 변형. 부른 순서를 log에 남깁니다."""
    item = interleave.Timed(key, fn=None, args=(), **fields)
    values = iter(durations)

    def runner(loops):
        seconds = next(values)
        clock.now += seconds
        log.append(key)
        return seconds

    item._runner, item._loops, item._metadata = runner, range(1), FakeStats()
    return item


def rounds_of(log, keys_per_round):
    return [log[i : i + keys_per_round] for i in range(0, len(log), keys_per_round)]


def test_each_round_runs_every_variant_once_in_the_order_the_seed_gives(clock):
    log = []
    keys = ["base", "a", "b", "c"]
    items = [fake_item(k, itertools.repeat(1.0), log, clock) for k in keys]
    settings = interleave.Settings(min_rounds=12, max_rounds=12)
    info = interleave.run_rounds(items, items[0], settings, seed=31337)
    assert info["seed"] == 31337 and info["rounds"] == 12
    played = rounds_of(log, len(keys))
    assert played == [stats.round_order(keys, 31337, r) for r in range(12)]
    assert len({tuple(order) for order in played}) > 1, "라운드마다 순서가 바뀌어야 합니다"
    for item in items:
        assert item.seconds == [1.0] * 12 and item._metadata.durations == [1.0] * 12


def test_a_group_stops_at_min_rounds_when_every_interval_is_within_five_percent(clock):
    log = []
    base = fake_item("base", itertools.repeat(2.0), log, clock)
    fast = fake_item("fast", itertools.cycle([1.0, 1.01, 0.99]), log, clock)
    settings = interleave.Settings(min_rounds=9, max_rounds=300, budget_s=1e9)
    info = interleave.run_rounds([base, fast], base, settings, seed=1)
    assert info["rounds"] == 9
    assert info["width"] <= stats.TARGET_HALF_WIDTH and info["target"] == stats.TARGET_HALF_WIDTH
    interval = interleave.interval(base, fast)
    assert info["width"] == round(stats.half_width(interval), 4)


def test_a_narrow_interval_on_the_verdict_edge_stops_like_any_other(clock):
    # 이슈 40: 경계(1.05)에 걸친 좁은 구간도 최소 라운드에서 멈춥니다. 경계를 벗어날 때까지 더
    # 재면(선택적 멈춤) 95% 구간이 약속하는 것보다 자주 한쪽으로 틀립니다(tests/test_rounds.py).
    log = []
    base = fake_item("base", itertools.repeat(1.05), log, clock)
    edge = fake_item("edge", itertools.cycle([1.0, 1.01, 0.99]), log, clock)  # 비율 ≈ 1.05
    settings = interleave.Settings(min_rounds=9, max_rounds=40, budget_s=1e9)
    info = interleave.run_rounds([base, edge], base, settings, seed=6)
    assert info["rounds"] == 9 and info["width"] <= stats.TARGET_HALF_WIDTH
    assert interleave.interval(base, edge).verdict == "inconclusive"


def test_one_noisy_variant_keeps_the_group_going_until_max_rounds(clock):
    log = []
    base = fake_item("base", itertools.repeat(1.0), log, clock)
    steady = fake_item("steady", itertools.repeat(0.5), log, clock)
    noisy = fake_item("noisy", itertools.cycle([0.5, 1.5, 1.0]), log, clock)
    settings = interleave.Settings(min_rounds=9, max_rounds=25, budget_s=1e9)
    info = interleave.run_rounds([base, steady, noisy], base, settings, seed=2)
    assert info["rounds"] == 25
    assert info["width"] > stats.TARGET_HALF_WIDTH  # 도달한 폭을 그대로 기록합니다


def test_the_time_budget_stops_a_noisy_group_after_min_rounds(clock):
    log = []
    base = fake_item("base", itertools.repeat(1.0), log, clock)
    noisy = fake_item("noisy", itertools.cycle([0.5, 1.5]), log, clock)
    settings = interleave.Settings(min_rounds=9, max_rounds=300, budget_s=30.0)
    started = clock.now
    info = interleave.run_rounds([base, noisy], base, settings, seed=3)
    # 라운드마다 1 + 0.5 또는 1 + 1.5초(가상): 누적이 30초를 처음 넘는 라운드에서 멈춥니다.
    elapsed = list(itertools.accumulate(1.0 + x for x in itertools.islice(
        itertools.cycle([0.5, 1.5]), 300)))  # fmt: skip
    expected = next(r for r, t in enumerate(elapsed, 1) if r >= 9 and t > 30.0)
    assert info["rounds"] == expected < 300
    assert info["seconds"] == pytest.approx(clock.now - started)


def test_the_budget_never_cuts_a_group_below_min_rounds(clock):
    log = []
    base = fake_item("base", itertools.repeat(100.0), log, clock)
    noisy = fake_item("noisy", itertools.cycle([50.0, 150.0]), log, clock)
    settings = interleave.Settings(min_rounds=9, max_rounds=300, budget_s=0.001)
    assert interleave.run_rounds([base, noisy], base, settings, seed=4)["rounds"] == 9


def test_a_dry_run_is_one_round(clock):
    log = []
    items = [fake_item(k, itertools.repeat(1.0), log, clock) for k in ("base", "x")]
    info = interleave.run_rounds(items, items[0], interleave.Settings(dry_run=True), seed=5)
    assert info["rounds"] == 1 and sorted(log) == ["base", "x"]


def test_an_expensive_variant_with_max_rounds_drops_out_and_the_rest_continue(clock):
    log = []
    calls = []
    base = fake_item("base", itertools.repeat(1.0), log, clock)
    costly = fake_item("costly", itertools.repeat(0.5), log, clock, max_rounds=2,
                       before_round=lambda: calls.append("costly"))  # fmt: skip
    other = fake_item("other", itertools.repeat(0.5), log, clock)
    settings = interleave.Settings(min_rounds=6, max_rounds=6)
    interleave.run_rounds([base, costly, other], base, settings, seed=6)
    assert len(costly.seconds) == 2 and len(other.seconds) == 6
    assert calls == ["costly", "costly"]  # before_round는 그 변형을 재기 직전에만 부릅니다


def test_without_a_baseline_the_group_stops_at_min_rounds_and_has_no_width(clock):
    log = []
    items = [fake_item("ceiling", itertools.cycle([1.0, 3.0]), log, clock)]
    info = interleave.run_rounds(items, None, interleave.Settings(min_rounds=4), seed=7)
    assert info["rounds"] == 4 and info["width"] is None


# --- measure.Comparison: 벤치마크가 쓰는 준비물 ---------------------------------------------


class FakeBenchmark:
    """pytest-benchmark의 준비물 대신: 함수마다 정해 둔 시간을 돌려주는 실행기를 만듭니다."""

    fullname = "benchmarks/bench_fake.py::test_fake"
    _min_time = 0.0

    def __init__(self, seconds, log):
        self.seconds, self.log = seconds, log

    def _make_runner(self, fn, args, kwargs):
        def runner(loops):
            output = fn(*args)
            self.log.append(fn.__name__)
            return (
                (self.seconds[fn.__name__], output) if loops is None else self.seconds[fn.__name__]
            )

        return runner

    def _make_stats(self, iterations):
        return FakeStats()


def new_state(timing=True, rounds=5) -> measurement.MeasurementRun:
    settings = interleave.Settings(min_rounds=rounds, max_rounds=rounds, memory=False)
    return measurement.MeasurementRun(
        timing=timing, gpu=False, dry_run=False, publish=False, sweep=False, results_dir=None,
        device=torch.device("cpu"), settings=settings, seed=424242,
    )  # fmt: skip


def named(name, value):
    def fn():
        return value

    fn.__name__ = name
    return fn


STAGES = [  # (변형, 초, 토큰): 큰 마이크로 배치 단계는 같은 시간에 토큰이 두 배입니다.
    ("baseline", 4.0, 1000),
    ("workers", 2.0, 1000),
    ("bf16", 1.0, 1000),
    ("bigger-batch", 1.0, 2000),
]


def capstone_waterfall(state, log):
    seconds = {variant: s for variant, s, _ in STAGES}
    group = measure.Comparison(registry.by_id("capstone"), "waterfall", state,
                               FakeBenchmark(seconds, log), params={"steps": 2})  # fmt: skip
    for variant, _, tokens in STAGES:
        role = "baseline" if variant == "baseline" else "other"
        group.add(variant, named(variant, variant.upper()), role=role,
                  per_call={"tokens": tokens})  # fmt: skip
    return group


def test_the_waterfall_records_ratios_to_the_baseline_and_to_the_previous_stage():
    state, log = new_state(), []
    group = capstone_waterfall(state, log)
    outputs = group.run()
    assert outputs == {v: v.upper() for v, *_ in STAGES}
    entries = {e["key"]: e for e in state.pages["capstone"].benchmarks}
    # 토큰 하나당 시간으로 비교합니다: 기준 4초/1000토큰, 큰 배치 1초/2000토큰 → 8배.
    assert entries["baseline"]["ratio"] is None
    assert [entries[k]["ratio"]["median"] for k in ("workers", "bf16", "bigger-batch")] == [
        2.0, 4.0, 8.0,
    ]  # fmt: skip
    assert "versus_previous" not in entries["baseline"]
    previous = [
        entries[k]["versus_previous"]["median"] for k in ("workers", "bf16", "bigger-batch")
    ]
    assert previous == [2.0, 2.0, 2.0]  # "앞 단계 대비": 바로 앞 단계와의 짝 비율
    assert entries["bigger-batch"]["metrics"]["tokens_per_s"] == 2000.0
    assert entries["workers"]["rounds"] == 5 and entries["workers"]["median_s"] == 2.0


def test_the_groups_seed_is_recorded_and_reproduces_the_order_it_measured_in():
    state, log = new_state(rounds=8), []
    group = capstone_waterfall(state, log)
    group.run()
    info = state.pages["capstone"].groups["waterfall"]
    assert info["seed"] == zlib.crc32(b"424242:capstone:waterfall") and info["rounds"] == 8
    measured = log[len(STAGES) :]  # 앞의 호출은 변형마다 한 번씩(출력 받기와 워밍업)
    keys = [v for v, *_ in STAGES]
    assert rounds_of(measured, len(keys)) == [
        stats.round_order(keys, info["seed"], r) for r in range(8)
    ]


def test_measured_entries_make_a_valid_results_document():
    state = new_state()
    capstone_waterfall(state, []).run()
    doc = measurement.build_document(state)
    validation.validate(doc, "measured-by-compare")
    assert list(doc["pages"]) == ["capstone"]


def test_plain_pytest_calls_each_variant_once_and_times_nothing():
    state, log = new_state(timing=False), []
    group = capstone_waterfall(state, log)
    expensive = named("expensive", None)
    group.add("compile", expensive, role="other", smoke=False)
    group.computed("ceiling", "matmul-float32", metrics={"tflop_per_s": 1.0})
    outputs = group.run()
    assert log == []  # 실행기(시간 재기)를 쓰지 않았습니다
    assert outputs == {v: v.upper() for v, *_ in STAGES}  # smoke=False인 변형은 부르지 않습니다
    assert state.pages == {}


# --- 이름 검사(P11): 평소 pytest에서도 멈춥니다 ---------------------------------------------


class FakeNode:
    nodeid = "benchmarks/bench_tip4_create_on_device.py::test_create"

    def __init__(self, *groups):
        self.marker = pytest.mark.measures(*groups).mark

    def get_closest_marker(self, name):
        return self.marker if name == "measures" else None


def fake_request(*groups, page="tip4", module="benchmarks.bench_tip4_create_on_device"):
    bench = types.ModuleType(module)
    if page is not None:
        bench.PAGE = page
    return types.SimpleNamespace(module=bench, node=FakeNode(*groups))


def plain_compare(*groups, **request):
    return measure.Compare(fake_request(*groups, **request), new_state(timing=False), object())


def test_a_group_that_is_not_in_the_registry_stops_plain_pytest():
    compare = plain_compare("rand", "no-such-group")
    with pytest.raises(registry.RegistryError, match="no-such-group"):
        compare("no-such-group")


def test_a_group_missing_from_the_measures_marker_stops_plain_pytest():
    with pytest.raises(registry.RegistryError, match="measures"):
        plain_compare("rand")("zeros")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(variant="no-such-variant"), "no-such-variant"),
        (dict(role="fastest"), "역할"),
        (dict(metrics={"speed": 1.0}), "speed"),
        (dict(per_call={"apples": 3}), "apples"),
    ],
)
def test_an_unknown_variant_role_or_metric_stops_plain_pytest(change, message):
    group = plain_compare("rand")("rand")
    arguments = {"variant": "create-on-device", "role": "recommended"} | change
    with pytest.raises(registry.RegistryError, match=message):
        group.add(arguments.pop("variant"), named("f", 1), **arguments)


def test_the_same_key_twice_stops_plain_pytest():
    group = plain_compare("rand")("rand")
    group.add("create-on-device", named("f", 1), role="recommended")
    with pytest.raises(registry.RegistryError, match="두 번"):
        group.add("create-on-device", named("g", 2), role="other")


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        (dict(page=None), "PAGE가 없습니다"),
        (dict(page="tip3"), "tip3 벤치마크가 아닙니다"),
        (dict(page="no-such-page"), "no-such-page"),
    ],
)
def test_a_bench_module_must_name_its_own_registry_page(request_fields, message):
    with pytest.raises(registry.RegistryError, match=message):
        plain_compare("rand", **request_fields)
