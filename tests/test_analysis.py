"""benchmarks/analysis.py의 테스트: 속도 향상, 천장 대비 비율, 측정 오차 범위, 결론 문장, 요약."""

import copy

import pytest

from benchmarks import analysis
from guide import registry
from tests.results_sample import sample_document
from tests.site_build import ROOT


@pytest.fixture
def doc():
    return sample_document(ROOT)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "2.5 s"), (0.00737, "7.37 ms"), (0.00011, "110 µs"), (3.2e-8, "32 ns")],
)
def test_format_seconds_picks_a_readable_unit(seconds, text):
    assert analysis.format_seconds(seconds) == text


@pytest.mark.parametrize(("ratio", "text"), [(2.75, "2.75배"), (0.53, "0.53배(느려짐)"),
                                             (12.34, "12.3배")])  # fmt: skip
def test_a_ratio_below_one_always_says_slower(ratio, text):
    assert analysis.format_ratio(ratio) == text


def test_speedup_is_baseline_median_over_recommended_median(doc):
    [group, ceiling] = analysis.groups_for(doc, "tip4")
    assert group.speedup == pytest.approx(0.00737 / 0.00268)
    assert ceiling.speedup is None and ceiling.with_role("ceiling").relative_speed is None
    assert group.title == "torch.rand (64 MiB)" and group.work() == "텐서 1개"


def test_labels_come_from_the_registry_not_from_function_names(doc):
    [group, _] = analysis.groups_for(doc, "tip4")
    assert [row.label for row in group.rows] == ["CPU에서 만든 뒤 복사", "장치에서 바로 만들기"]


def test_ceiling_percent_compares_the_shared_rate(doc):
    [group, _] = analysis.groups_for(doc, "tip4")
    assert group.recommended.ceiling_percent == pytest.approx(100 * 98.7 / 3210.0)
    assert group.with_role("baseline").ceiling_percent is None


def test_page_without_measurements_has_no_groups(doc):
    assert analysis.groups_for(doc, "tip5") == []
    assert analysis.not_measured_for(doc, "tip5") == [
        ("DP 대 DDP", "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유).")
    ]


@pytest.mark.parametrize(("gap_in_iqrs", "noise"), [(0.5, True), (1.0, True), (3.0, False)])
def test_difference_smaller_than_the_spread_is_no_difference(doc, gap_in_iqrs, noise):
    baseline, fast = doc["benchmarks"][0], doc["benchmarks"][1]
    fast["median_s"] = baseline["median_s"] - gap_in_iqrs * baseline["iqr_s"]
    [group, _] = analysis.groups_for(doc, "tip4")
    assert group.within_noise is noise
    assert (group.headline_text() == analysis.NO_DIFFERENCE) is noise
    assert ("차이 없음" in analysis.conclusion(group, doc["environment"])) is noise


def test_tiny_workloads_hide_their_tflops(doc):
    row = analysis.Row(
        {"metrics": {"tflop_per_s": 0.0036}, "median_s": 0.005, "computed": False}, "fp32"
    )
    assert row.shown_metrics() == {}  # 18 MFLOP: 고정 비용이 정하는 크기입니다
    row.entry["metrics"]["tflop_per_s"] = 2.0
    assert row.shown_metrics() == {"tflop_per_s": 2.0}


def step_group(fp32_s, bf16_s):
    doc = sample_document(ROOT)
    doc["environment"].update(device_kind="cpu", device_count=0)
    params = {"d_model": 512, "layers": 4, "batch_size": 8, "seq_len": 128}
    base = copy.deepcopy(doc["benchmarks"][0])
    base.update(page="tip6", group="step", params=params, metrics={}, ceiling=None)
    base.update(snippet="snippets/tip6_16bit.py", benchmark="benchmarks/bench_tip6_16bit.py")
    fp32 = base | {"id": "tip6.fp32", "key": "fp32", "variant": "fp32", "role": "baseline",
                   "median_s": fp32_s, "iqr_s": 0.001}  # fmt: skip
    bf16 = base | {"id": "tip6.bf16", "key": "bf16", "variant": "bf16", "role": "recommended",
                   "median_s": bf16_s, "iqr_s": 0.001}  # fmt: skip
    doc["benchmarks"] = [fp32, bf16]
    return doc


@pytest.mark.parametrize(
    ("flags", "fp32_s", "bf16_s", "expected"),
    [
        (["avx512_bf16"], 0.2, 0.1, "AVX-512 BF16이(가) 있어 bf16 행렬 곱을 하드웨어로"),
        ([], 0.1, 0.2, "AVX-512 BF16도 AMX도 없어"),
        (["amx_bf16"], 0.2, 0.1, "AMX"),
    ],
)
def test_bf16_on_a_cpu_concludes_from_its_isa_features(flags, fp32_s, bf16_s, expected):
    doc = step_group(fp32_s, bf16_s)
    doc["environment"]["cpu_flags"] = flags
    [group] = analysis.groups_for(doc, "tip6")
    text = analysis.conclusion(group, doc["environment"])
    assert expected in text
    assert ("(느려짐)" in text) is (bf16_s > fp32_s)


def test_summary_names_each_page_with_labels_units_and_conclusions(doc):
    text = "\n".join(analysis.summary_lines(doc))
    assert "측정 장치: Test GPU 9000 (cuda), torch 2.99.0+cu999" in text
    assert "팁 4: 텐서를 장치에서 바로 만들기" in text
    assert "torch.rand (64 MiB) — 텐서 1개당" in text
    assert "[기준] CPU에서 만든 뒤 복사, 7.37 ms, 36.4 GB/s" in text
    assert (
        "[권장 방식] 장치에서 바로 만들기, 2.68 ms, 98.7 GB/s, 천장 대비 3% · 기준 대비 2.75배"
        in text
    )
    assert "재지 않음(DP 대 DDP): GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)." in text
    assert text.index("팁 3") < text.index("팁 4") < text.index("팁 5")
    assert "test_" not in text and "rand_then_copy" not in text


def test_a_memory_for_time_tradeoff_names_both_sides(doc):
    base = copy.deepcopy(doc["benchmarks"][0])
    base.update(page="checkpointing", group="step", params={}, ceiling=None)
    base.update(snippet="snippets/beyond_checkpointing.py")
    base.update(benchmark="benchmarks/bench_beyond_checkpointing.py")
    plain = base | {"id": "checkpointing.a", "key": "a", "variant": "no-checkpoint",
                    "role": "baseline", "median_s": 0.10, "iqr_s": 0.001,
                    "metrics": {"saved_activation_mib": 400.0}}  # fmt: skip
    every = base | {"id": "checkpointing.b", "key": "b", "variant": "every-block",
                    "role": "recommended", "median_s": 0.125, "iqr_s": 0.001,
                    "metrics": {"saved_activation_mib": 100.0}}  # fmt: skip
    doc["benchmarks"] = [plain, every]
    [group] = analysis.groups_for(doc, "checkpointing")
    text = analysis.conclusion(group, doc["environment"])
    assert "0.80배(느려짐)" in text and "400 → 100 MiB(75% 줄어듦)" in text


def timing(median_s, iqr_s, **metrics):
    return {"median_s": median_s, "iqr_s": iqr_s, "metrics": metrics}


def test_variants_doing_different_work_per_call_compare_by_throughput():
    # 전부 합치면 9단계: 마이크로 배치가 두 배라 스텝 시간은 비슷해도 토큰/초는 두 배입니다.
    ratio, noise = analysis.compare(timing(0.26, 0.01, tokens_per_s=3940.0),
                                    timing(0.271, 0.01, tokens_per_s=7567.0))  # fmt: skip
    assert ratio == pytest.approx(7567.0 / 3940.0, rel=1e-3)
    assert noise is False  # 토큰 하나당 시간의 차이가 토큰 하나당 IQR보다 훨씬 큽니다


def test_without_a_throughput_the_medians_are_compared():
    assert analysis.compare(timing(0.2, 0.01), timing(0.1, 0.01)) == (2.0, False)
    assert analysis.compare(timing(0.2, 0.05), timing(0.18, 0.05))[1] is True


def overhead_group(*others):
    """팁 7의 프로파일러 비용 묶음: others는 (기준 대비 속도, 측정 오차 범위 안인지)."""
    rows = [analysis.Row({"role": "baseline"}, "프로파일러 없음", 1.0)]
    rows += [
        analysis.Row({"role": "other"}, f"프로파일러 {n}", speed, within_noise=noise)
        for n, (speed, noise) in enumerate(others)
    ]
    return analysis.Group(registry.by_id("tip7"), "overhead", rows)


def test_profiler_cost_names_the_most_expensive_profiler():
    text = analysis.conclusion(overhead_group((0.95, True), (0.16, False)), {})
    assert "느려집니다" in text and "‘프로파일러 1’입니다" in text and "흔들림" not in text


def test_a_profiler_measured_faster_than_none_is_called_noise_not_a_speedup():
    text = analysis.conclusion(overhead_group((1.36, False), (1.0, True)), {})
    assert "느려지지 않았습니다" in text
    assert "‘프로파일러 0’은(는) 측정의 흔들림입니다" in text


def test_the_costliest_tool_is_the_slowest_one_beyond_the_noise():
    assert (
        overhead_group((0.95, True), (0.16, False), (0.5, False)).costliest.label == "프로파일러 1"
    )
    assert overhead_group((0.95, True), (1.36, False)).costliest is None
