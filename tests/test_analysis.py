"""benchmarks/analysis.py와 benchmarks/summary.py의 테스트: 결과 파일(스키마 3)에서 보여 줄 숫자를
계산합니다. 구간과 판정, 천장 대비, 교차점, 본전, 페이지마다의 분석, 터미널 요약."""

from __future__ import annotations

import copy

import pytest

from guide import registry
from report import analysis, curves, summary
from tests.results_sample import cpu_document, entry, ratio, sample_document
from tests.site_build import ROOT
from torchdoctor.stats import Interval


@pytest.fixture
def doc():
    return sample_document(ROOT)


def test_the_inverse_swaps_the_bounds():
    inverse = Interval(2.0, 1.6, 2.5, 0.961).inverse()
    assert (inverse.median, inverse.low, inverse.high) == (0.5, 0.4, 0.625)


def test_rows_take_labels_from_the_registry_and_ratios_from_the_file(doc):
    [rand, ceiling] = analysis.groups_for(doc["pages"]["tip4"], registry.by_id("tip4"))
    assert [row.label for row in rand.rows] == ["CPU에서 만든 뒤 복사", "장치에서 바로 만들기"]
    assert rand.baseline.ratio is None
    assert rand.recommended.ratio == Interval(2.75, 2.70, 2.81, 0.961)
    assert rand.title == "torch.rand (64 MiB)" and rand.work() == "텐서 1개"
    assert rand.info["rounds"] == 17 and ceiling.rows[0].role == "ceiling"


def test_ceiling_percent_compares_the_shared_rate(doc):
    [loop] = analysis.groups_for(doc["pages"]["tip3"], registry.by_id("tip3"))
    [rand, _] = analysis.groups_for(doc["pages"]["tip4"], registry.by_id("tip4"))
    assert rand.recommended.ceiling_percent == pytest.approx(100 * 98.7 / 3210.0)
    assert rand.baseline.ceiling_percent is None  # 천장을 가리키지 않는 줄
    assert loop.baseline.ceiling_percent == pytest.approx(100 * 219.0 / 360.0)
    assert loop.with_role("ceiling").ceiling_percent is None


def test_groups_follow_the_registry_order_not_the_file_order(doc):
    section = doc["pages"]["tip4"]
    section["benchmarks"].reverse()
    groups = analysis.groups_for(section, registry.by_id("tip4"))
    assert [g.key for g in groups] == ["rand", "ceiling"]


def test_tiny_workloads_hide_their_tflops():
    row = analysis.Row(entry("a", "step", "fp32", "baseline", 0.005,
                             metrics={"tflop_per_s": 0.0036}), "fp32")  # fmt: skip
    assert row.shown_metrics() == {}  # 18 MFLOP: 고정 비용이 정하는 크기입니다
    row.entry["metrics"]["tflop_per_s"] = 2.0
    assert row.shown_metrics() == {"tflop_per_s": 2.0}


def overhead_group(*others):
    """팁 7의 프로파일러 비용 묶음: others는 기준 대비 (중앙값, 아래, 위)."""
    rows = [analysis.Row(entry("none", "overhead", "profiler-none", "baseline", 1.0), "없음")]
    for n, raw in enumerate(others):
        row = entry(f"p{n}", "overhead", "profiler-simple", "other", 1.0, ratio=ratio(*raw))
        rows.append(analysis.Row(row, f"프로파일러 {n}", Interval.of(row["ratio"])))
    return analysis.Group(registry.by_id("tip7"), "overhead", rows=rows)


def test_the_costliest_tool_is_the_slowest_one_wholly_below_the_band():
    group = overhead_group((0.96, 0.93, 0.99), (0.16, 0.15, 0.17), (0.5, 0.45, 0.55))
    assert group.costliest.label == "프로파일러 1"
    # 중앙값이 더 작아도 구간이 0.95에 걸치면 "느림"으로 치지 않습니다.
    assert overhead_group((0.5, 0.2, 0.96), (0.9, 0.88, 0.92)).costliest.label == "프로파일러 1"
    assert overhead_group((0.98, 0.94, 1.02), (1.36, 1.3, 1.4)).costliest is None


def point(x, median, low, high):
    return curves.Point(x, Interval(median, low, high, 0.961), 1.0, 1.0, {})


@pytest.mark.parametrize(
    ("points", "kind", "verdict", "x"),
    [
        ([(32, 1.5, 1.4, 1.6), (64, 1.6, 1.5, 1.7)], "all", "faster", None),
        ([(32, 1.0, 0.97, 1.03), (64, 1.01, 0.98, 1.04)], "none", "same", None),
        ([(32, 0.5, 0.45, 0.55), (64, 0.9, 0.85, 0.98), (128, 2.0, 1.9, 2.1)], "from", "faster",
         64 * 2 ** (0.10536 / 0.79851)),
        ([(32, 2.0, 1.9, 2.1), (64, 1.0, 0.97, 1.03), (128, 1.01, 0.98, 1.04)], "until", "faster",
         None),
        ([(256, 0.5, 0.45, 0.55), (16, 2.0, 1.9, 2.1)], "from", "slower", 64.0),
        # 빨라짐 → 차이 없음 → 빨라짐: 오르내리므로 교차점 하나가 없습니다.
        ([(64, 1.3, 1.2, 1.4), (128, 1.0, 0.97, 1.03), (256, 1.5, 1.4, 1.6)], "mixed", "faster",
         None),
        ([(8, 0.7, 0.68, 0.72), (16, 1.1, 1.08, 1.12), (64, 1.0, 0.98, 1.02)], "mixed", "same",
         None),
    ],
)  # fmt: skip
def test_the_crossover_is_where_the_verdict_changes_on_a_log_axis(points, kind, verdict, x):
    found = curves.crossover([point(*p) for p in points])
    assert (found.kind, found.verdict) == (kind, verdict)
    assert found.x == (pytest.approx(x, rel=1e-3) if x else None)
    xs = sorted(p[0] for p in points)
    assert (found.low_x, found.high_x) != (None, None)
    assert xs[0] <= found.low_x <= found.high_x <= xs[-1]


def break_even_rows(base_s, fast_s, fast_ratio, *, one_time=None, subtract_one_time=None,
                    params=None):  # fmt: skip
    rows = [
        entry("off", "fixed", "benchmark-off", "baseline", base_s, params=params,
              metrics={"one_time_s": subtract_one_time} if subtract_one_time else {}),
        entry("on", "fixed", "benchmark-on", "recommended", fast_s, params=params,
              ratio=ratio(*fast_ratio), metrics={"one_time_s": one_time} if one_time else {}),
    ]  # fmt: skip
    page = registry.by_id("cudnn-benchmark")
    return [analysis.Group(page, "fixed", rows=[
        analysis.Row(e, e["variant"], Interval.of(e["ratio"])) for e in rows
    ])]  # fmt: skip


def test_break_even_is_the_one_time_cost_over_the_saving_per_unit():
    spec = registry.BreakEven("재기", cost="on", cost_metric="median_s", baseline="off",
                              variant="on")  # fmt: skip
    result = analysis.break_even(spec, break_even_rows(0.5, 0.25, (2.0, 1.9, 2.1)))
    assert (result.cost_s, result.saving_s, result.steps) == (0.25, 0.25, 1.0)


def test_break_even_subtracts_the_same_metric_of_the_subtracted_row():
    # 한 번 드는 비용 = 켠 쪽의 첫 호출(12초) − 끈 쪽의 첫 호출(2초).
    # 끈 쪽의 중앙값(0.5초)을 빼면 단위가 다른 두 시간을 빼게 됩니다.
    spec = registry.BreakEven("재기", cost="on", cost_metric="one_time_s", baseline="off",
                              variant="on", subtract="off")  # fmt: skip
    groups = break_even_rows(0.5, 0.25, (2.0, 1.9, 2.1), one_time=12.0, subtract_one_time=2.0)
    result = analysis.break_even(spec, groups)
    assert result.cost_s == pytest.approx(10.0) and result.steps == pytest.approx(40.0)


def test_break_even_counts_units_when_one_call_is_many_steps():
    # 호출 한 번이 20스텝: 스텝마다 아끼는 시간은 (0.5 − 0.25) / 20초입니다.
    spec = registry.BreakEven("재기", cost="on", cost_metric="one_time_s", baseline="off",
                              variant="on", per_param="steps")  # fmt: skip
    groups = break_even_rows(0.5, 0.25, (2.0, 1.9, 2.1), one_time=5.0, params={"steps": 20})
    result = analysis.break_even(spec, groups)
    assert result.saving_s == pytest.approx(0.0125) and result.steps == pytest.approx(400.0)


def test_no_break_even_without_a_measured_saving():
    spec = registry.BreakEven("재기", cost="on", cost_metric="median_s", baseline="off",
                              variant="on")  # fmt: skip
    same = analysis.break_even(spec, break_even_rows(0.5, 0.49, (1.02, 0.98, 1.05)))
    assert same.cost_s == 0.49 and same.saving_s is None and same.steps is None
    missing = registry.BreakEven("재기", cost="x", cost_metric="median_s", baseline="off",
                                 variant="on")  # fmt: skip
    assert analysis.break_even(missing, break_even_rows(0.5, 0.25, (2.0, 1.9, 2.1))) is None


def test_every_registry_page_gets_a_view_measured_or_not(doc):
    views = analysis.analyze(doc)
    assert list(views) == [page.id for page in registry.load()]
    assert {pid for pid, view in views.items() if view.measured} == {"tip3", "tip4", "tip5"}
    assert views["tip5"].groups == [] and views["tip1"].not_measured == []
    assert views["tip5"].not_measured == [
        ("DP 대 DDP", "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유).")
    ]
    assert all(view.stale == {} for view in views.values())


def test_the_same_reason_twice_is_listed_once(doc):
    items = doc["pages"]["tip5"]["not_measured"]
    items.append(copy.deepcopy(items[0]))
    assert len(analysis.analyze(doc)["tip5"].not_measured) == 1


def test_summary_names_each_page_with_labels_units_intervals_and_conclusions(doc):
    text = "\n".join(summary.lines(doc))
    assert "측정 장치: Test GPU 9000 (700 W), torch 2.99.0+cu999" in text
    assert "팁 4: 텐서를 장치에서 바로 만들기" in text
    assert "torch.rand (64 MiB) — 텐서 1개당, 라운드 17번" in text
    assert "[기준] CPU에서 만든 뒤 복사, 7.37 ms, 36.4 GB/s" in text
    assert (
        "[권장 방식] 장치에서 바로 만들기, 2.68 ms, 98.7 GB/s, 천장 대비 3% "
        "· 기준 대비 2.75배 (2.70–2.81, 빨라짐)" in text
    )
    assert "재지 않음(DP 대 DDP): GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)." in text
    assert text.index("팁 3") < text.index("팁 4") < text.index("팁 5")
    assert "test_" not in text and "rand_then_copy" not in text


def test_summary_says_no_mechanism_for_a_cuda_only_stage_on_a_cpu():
    text = "\n".join(summary.lines(cpu_document(ROOT)))
    [tf32] = [line for line in text.splitlines() if "[비교] 4. + TF32 행렬 곱" in line]
    assert "이 장치에서는 바뀌는 것 없음" in tf32 and "느려짐" not in tf32
