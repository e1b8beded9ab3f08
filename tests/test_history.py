"""measuring/history.py와 measuring/fold.py의 테스트(이슈 40): 같은 코드로 잰 예전 실행의 중앙값을
잇고, 코드가 바뀌면 잇지 않으며, 페이지가 그 실행들로 실행 사이의 구간을 냅니다. 합성한 문서만
씁니다."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from guide import registry
from hooks import render
from measuring import fold, history
from report import analysis
from results_format import results_file
from results_format.schema import MAX_RUNS
from tests import results_sample as sample

ROOT = Path(__file__).resolve().parents[1]


def tip4_run(median: float, date: str, seed: int, **changes) -> dict:
    low, high = median * 0.98, median * 1.02
    section = sample.tip4_section(ROOT, fast_ratio=sample.ratio(median, low, high))
    section["measured"] |= {"date": date, "seed": seed, **changes}
    return section


def test_a_new_run_of_the_same_code_keeps_the_earlier_median_and_run():
    old = tip4_run(2.50, "2031-04-05T06:00:00Z", 1)
    new = history.carry(old, tip4_run(2.75, "2031-04-05T07:00:00Z", 2))
    fast = next(e for e in new["benchmarks"] if e["ratio"])
    assert fast["ratio_history"] == [2.50]
    assert new["measured"]["earlier_runs"] == [{"date": "2031-04-05T06:00:00Z", "seed": 1}]
    assert all("ratio_history" not in e for e in new["benchmarks"] if not e["ratio"])


def test_a_changed_snippet_starts_a_new_history():
    old = history.carry(tip4_run(2.5, "2031-04-05T06:00:00Z", 1),
                        tip4_run(2.6, "2031-04-05T06:30:00Z", 2))  # fmt: skip
    new = history.carry(old, tip4_run(2.75, "2031-04-05T07:00:00Z", 3, snippet_sha256="f" * 64))
    assert "earlier_runs" not in new["measured"]
    assert all("ratio_history" not in e for e in new["benchmarks"])


def test_the_history_keeps_the_newest_runs_up_to_max_runs():
    section = tip4_run(2.0, "2031-04-05T00:00:00Z", 0)
    for index in range(1, MAX_RUNS + 3):
        run = tip4_run(2.0 + index / 100, f"2031-04-05T{index:02}:00:00Z", index)
        section = history.carry(section, run)
    fast = next(e for e in section["benchmarks"] if e["ratio"])
    assert len(fast["ratio_history"]) == MAX_RUNS - 1 == len(section["measured"]["earlier_runs"])
    assert fast["ratio_history"][0] == pytest.approx(2.0 + (MAX_RUNS + 1) / 100)
    assert section["measured"]["earlier_runs"][0]["seed"] == MAX_RUNS + 1


def test_a_sweep_carries_its_points_by_x_with_its_own_code():
    old = sample.tip6_sweep_section(ROOT)
    new = copy.deepcopy(old)
    new["measured"]["date"] = new["sweeps"]["width"]["measured"]["date"] = "2031-05-01T00:00:00Z"
    carried = history.carry(old, new)
    for before, after in zip(old["sweeps"]["width"]["points"],
                             carried["sweeps"]["width"]["points"], strict=True):  # fmt: skip
        assert after["ratio_history"] == [before["ratio"]["median"]]
    new["sweeps"]["width"]["measured"]["benchmark_sha256"] = "e" * 64
    changed = history.carry(old, new)
    assert all("ratio_history" not in p for p in changed["sweeps"]["width"]["points"])


def test_the_page_draws_the_interval_across_runs_once_there_are_earlier_runs():
    runs = [tip4_run(m, f"2031-04-05T0{i}:00:00Z", i) for i, m in enumerate((2.5, 2.75, 2.6))]
    section = runs[0]
    for run in runs[1:]:
        section = history.carry(section, run)
    (row,) = [r for g in analysis.groups_for(section, registry.by_id("tip4"))
              for r in g.rows if r.ratio]  # fmt: skip
    assert row.ratio.runs == 3 and analysis.runs_of(section) == 3
    # 각 실행의 구간(±2%)보다 실행 사이의 차이가 커서 구간이 넓어집니다.
    assert row.ratio.low < 2.5 * 0.98 and row.ratio.high > 2.75 * 1.02
    single = analysis.groups_for(runs[0], registry.by_id("tip4"))
    assert [r.ratio.runs for g in single for r in g.rows if r.ratio] == [1]


def test_folding_runs_in_any_order_equals_publishing_them_oldest_first(tmp_path):
    docs = [sample.document(sample.CPU_DEVICE, {"tip4": tip4_run(m, f"2031-04-05T0{i}:00:00Z", i)})
            for i, m in enumerate((2.5, 2.75, 2.6))]  # fmt: skip
    folded = fold.fold([docs[2], docs[0], docs[1]])
    fast = next(e for e in folded["pages"]["tip4"]["benchmarks"] if e["ratio"])
    assert fast["ratio"]["median"] == 2.6 and fast["ratio_history"] == [2.75, 2.5]
    paths = [sample.write(tmp_path / f"run{i}.json", doc) for i, doc in enumerate(docs)]
    out = tmp_path / "folded.json"
    assert fold.main([str(out), *map(str, paths)]) == 0
    assert results_file.load(out, check_name=False) == folded


def test_folding_runs_of_two_devices_is_refused_in_korean(tmp_path, capsys):
    cpu = sample.document(sample.CPU_DEVICE, {"tip4": tip4_run(2.5, "2031-04-05T01:00:00Z", 1)})
    other = copy.deepcopy(cpu)
    other["device"]["torch"] = "2.98.0"
    paths = [sample.write(tmp_path / f"{n}.json", d) for n, d in (("a", cpu), ("b", other))]
    assert fold.main([str(tmp_path / "out.json"), *map(str, paths)]) == 1
    assert "장치나 torch 판이 다르거나" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_a_history_longer_than_the_earlier_runs_is_refused_by_validation(tmp_path):
    section = history.carry(tip4_run(2.5, "2031-04-05T01:00:00Z", 1),
                            tip4_run(2.6, "2031-04-05T02:00:00Z", 2))  # fmt: skip
    next(e for e in section["benchmarks"] if e["ratio"])["ratio_history"].append(2.7)
    path = sample.write(tmp_path / "x.json", sample.document(sample.CPU_DEVICE, {"tip4": section}))
    with pytest.raises(results_file.ResultsError, match="예전 실행"):
        results_file.load(path, check_name=False)


def test_the_provenance_line_says_how_many_runs_made_the_interval():
    one = tip4_run(2.5, "2031-04-05T06:00:00Z", 1)
    assert render._runs_text(one["measured"]) == (
        "2031-04-05, 한 번 실행(구간은 그 실행의 라운드만 담습니다)"
    )
    three = history.carry(history.carry(one, tip4_run(2.6, "2031-04-06T06:00:00Z", 2)),
                          tip4_run(2.7, "2031-04-07T06:00:00Z", 3))  # fmt: skip
    assert render._runs_text(three["measured"]) == (
        "2031-04-05–2031-04-07, 같은 코드로 3번 실행(구간은 실행 사이의 차이로 냅니다)"
    )
