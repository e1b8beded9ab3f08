"""benchmarks/analysis.py의 테스트: 속도 향상, 천장 대비 비율, 잡음 판단, 한국어 요약."""

import pytest

from benchmarks import analysis
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


def test_speedup_is_baseline_median_over_fast_median(doc):
    [group, ceiling] = analysis.groups_for(doc, "tip4")
    assert group.speedup == pytest.approx(0.00737 / 0.00268)
    assert ceiling.speedup is None and ceiling.with_role("ceiling").relative_speed is None
    found_group, speedup = analysis.headline(doc, "tip4")
    assert found_group == group and speedup == group.speedup


def test_ceiling_percent_compares_the_shared_rate(doc):
    [group, _] = analysis.groups_for(doc, "tip4")
    fast = group.with_role("fast")
    assert fast.ceiling_percent == pytest.approx(100 * 98.7 / 3210.0)
    assert group.with_role("baseline").ceiling_percent is None


def test_tip_without_fast_variant_has_no_headline(doc):
    assert analysis.headline(doc, "tip5") is None
    assert analysis.groups_for(doc, "tip5") == []


@pytest.mark.parametrize(("gap_in_iqrs", "noise"), [(0.5, True), (1.0, True), (3.0, False)])
def test_difference_smaller_than_the_spread_is_noise(doc, gap_in_iqrs, noise):
    baseline, fast = doc["benchmarks"][0], doc["benchmarks"][1]
    fast["median_s"] = baseline["median_s"] - gap_in_iqrs * baseline["iqr_s"]
    [group, _] = analysis.groups_for(doc, "tip4")
    assert group.within_noise is noise


def test_summary_names_each_tip_with_speedup_ceiling_and_skip_reason(doc):
    text = "\n".join(analysis.summary_lines(doc))
    assert "측정 장치: Test GPU 9000 (cuda), torch 2.99.0+cu999" in text
    assert "팁 4 · 텐서를 장치에서 바로 만들기" in text
    assert "느린 방식 rand_then_copy 7.37 ms, 36.4 GB/s" in text
    assert "빠른 방식 rand_on_device 2.68 ms, 98.7 GB/s, 천장 대비 3%" in text
    assert "속도 향상 2.75배" in text
    assert "재지 않음(test_x): GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)." in text
    assert text.index("팁 3") < text.index("팁 4") < text.index("팁 5")


def test_skipped_items_with_the_same_reason_are_listed_once(doc):
    reason = "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)."
    doc["not_measured"].append({"tip": "tip5", "key": "test_y", "reason": reason})
    assert analysis.skip_reasons(doc, "tip5") == [(["test_x", "test_y"], reason)]
    assert f"  재지 않음(test_x, test_y): {reason}" in analysis.summary_lines(doc)
