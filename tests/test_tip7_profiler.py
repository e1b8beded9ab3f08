"""snippets/tip7_profiler.py의 테스트: 두 데이터셋이 같은지, 프로파일러가 병목을 찾는지 봅니다."""

import re

import pytest
import torch
from lightning.pytorch.profilers import PyTorchProfiler, SimpleProfiler
from torch.utils.data import DataLoader

from snippets import tip7_profiler as tip7
from tests.site_build import ROOT, page_quotes


@pytest.mark.parametrize("n", [1, 7, 33])
@pytest.mark.parametrize("length", [8, 64])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_fast_dataset_equals_slow_dataset_sample_by_sample(n, length, dtype):
    slow = tip7.make_dataset("slow", n=n, length=length, dtype=dtype, seed=n)
    fast = tip7.make_dataset("fast", n=n, length=length, dtype=dtype, seed=n)
    assert len(slow) == len(fast) == n
    for index in range(n):
        (slow_x, slow_y), (fast_x, fast_y) = slow[index], fast[index]
        assert slow_x.dtype == fast_x.dtype == dtype
        torch.testing.assert_close(fast_x, slow_x, rtol=0, atol=0)
        torch.testing.assert_close(fast_y, slow_y, rtol=0, atol=0)


def test_features_really_transform_the_signal():
    # 같은 값이 나오는 것이 입력을 그대로 돌려주기 때문이 아님을 확인합니다.
    signals, _ = tip7.make_signals(n=2, length=16)
    features = tip7.expensive_features(signals[0])
    assert features.shape == signals[0].shape
    assert not torch.allclose(features, signals[0])
    assert not torch.equal(tip7.expensive_features(signals[1]), features)


def test_simple_profiler_report_blames_data_fetching_on_the_slow_dataset(tmp_path):
    report = tip7.fit_with_profiler("simple", tip7.make_dataset("slow"), 8, tmp_path)
    assert tip7.FETCH_ACTION in report and tip7.TRAINING_STEP_ACTION in report
    rows = tip7.parse_simple_report(report)
    fetch = tip7.action_total(rows, tip7.FETCH_ACTION)
    step = tip7.action_total(rows, tip7.TRAINING_STEP_ACTION)
    assert fetch > 5 * step > 0  # 페이지: "training_step보다 훨씬 오래 걸립니다"
    # 보고서는 파일(fit-simple.txt)로 남고, 반환값은 그 파일의 내용입니다.
    assert (tmp_path / "fit-simple.txt").read_text(encoding="utf-8") == report


def test_precomputing_shrinks_the_data_step(tmp_path):
    slow = tip7.parse_simple_report(
        tip7.fit_with_profiler("simple", tip7.make_dataset("slow"), 8, tmp_path)
    )
    fast = tip7.parse_simple_report(
        tip7.fit_with_profiler("simple", tip7.make_dataset("fast"), 8, tmp_path)
    )
    # 같은 폴더와 같은 파일 이름을 다시 써도 보고서가 이어 붙지 않습니다.
    assert len(fast) == len(slow)
    assert tip7.action_total(fast, tip7.FETCH_ACTION) < tip7.action_total(slow, tip7.FETCH_ACTION)


def test_advanced_profiler_report_names_the_planted_function(tmp_path):
    report = tip7.fit_with_profiler("advanced", tip7.make_dataset("slow", n=32), 4, tmp_path)
    # 데이터를 가져오는 동작의 cProfile 표 안에 __getitem__과 심어 둔 함수가 나와야 합니다.
    fetch_stats = report.split(f"Profile stats for: {tip7.FETCH_ACTION}")[1]
    fetch_stats = fetch_stats.split("Profile stats for:")[0]
    assert "Ordered by: cumulative time" in fetch_stats
    assert "(__getitem__)" in fetch_stats and "(expensive_features)" in fetch_stats
    # 페이지에 실은 발췌는 이 보고서의 실제 모양입니다: 머리글과 열 이름이 그대로 나옵니다.
    page = (ROOT / "docs/tips/07-profiler.md").read_text(encoding="utf-8")
    excerpt = page.split("<!-- advanced-excerpt -->")[1].split("```")[1]
    for line in ("Profile stats for: " + tip7.FETCH_ACTION, "Ordered by: cumulative time"):
        assert line in excerpt and line in report
    header = "ncalls  tottime  percall  cumtime  percall filename:lineno(function)"
    assert header in excerpt and header in report


def test_pytorch_profiler_fits_and_reports_operators(tmp_path):
    # 배치가 5개 이상이어야 Lightning이 기본 일정(wait=1, warmup=1, active=3)을 그대로 씁니다.
    dataset = tip7.make_dataset("fast", n=96)
    report = tip7.fit_with_profiler("pytorch", dataset, 5, tmp_path)
    assert "Profile stats for: records" in report
    assert "aten::" in report
    assert list(tmp_path.glob("*.pt.trace.json")), "추적 파일이 없습니다"


@pytest.mark.parametrize("filename", [None, "mine"])
def test_profiler_instance_is_accepted_too(tmp_path, filename):
    profiler = SimpleProfiler(dirpath=tmp_path, filename=filename)
    report = tip7.fit_with_profiler(profiler, tip7.make_dataset("fast", n=32), 2, tmp_path)
    assert tip7.FETCH_ACTION in report
    assert (tmp_path / "fit-mine.txt").exists() == (filename == "mine")


def test_no_profiler_returns_empty_report(tmp_path):
    assert tip7.fit_with_profiler(None, tip7.make_dataset("fast", n=32), 2, tmp_path) == ""
    assert list(tmp_path.iterdir()) == []


def small_model_and_loader(n=32, length=32):
    dataset = tip7.make_dataset("slow", n=n, length=length)
    return tip7.FeatureRegressor(features=length), DataLoader(dataset, batch_size=8)


def test_lightning_section_simple_profiler_logs_its_report(capfd, caplog):
    tip7.profile_simple(*small_model_and_loader(), max_steps=3)
    captured = capfd.readouterr()
    logged = caplog.text + captured.out + captured.err
    assert "FIT Profiler Report" in logged
    assert tip7.FETCH_ACTION in logged


def test_lightning_section_advanced_profiler_logs_function_stats(capfd, caplog):
    tip7.profile_advanced(*small_model_and_loader(), max_steps=3)
    captured = capfd.readouterr()
    logged = caplog.text + captured.out + captured.err
    assert "expensive_features" in logged
    assert logged.count("\n") > 200  # 몇 스텝만으로도 아주 긴 보고서입니다.


def test_lightning_section_advanced_profiler_writes_a_file(tmp_path):
    path = tip7.profile_advanced_to_file(*small_model_and_loader(), tmp_path, max_steps=3)
    assert path == tmp_path / "fit-advanced.txt"
    assert "expensive_features" in path.read_text(encoding="utf-8")


def test_lightning_section_pytorch_profiler_writes_table_and_trace(tmp_path):
    model, _ = small_model_and_loader()
    loader = DataLoader(tip7.make_dataset("fast", n=48, length=32), batch_size=8)
    path = tip7.profile_pytorch(model, loader, tmp_path, max_steps=5)
    table = path.read_text(encoding="utf-8")
    assert "aten::" in table and "CPU Mem" in table  # profile_memory=True가 메모리 열을 더합니다.
    assert list(tmp_path.glob("*.pt.trace.json"))


def test_lightning_pytorch_profiler_default_schedule_records_three_of_five_steps():
    # 페이지의 설명: PyTorchProfiler는 모든 스텝을 기록하지 않습니다. 1 건너뛰기, 1 워밍업,
    # 3 기록을 되풀이합니다.
    plan = PyTorchProfiler()._schedule._schedule
    actions = [plan(step).name for step in range(10)]
    cycle = ["NONE", "WARMUP", "RECORD", "RECORD", "RECORD_AND_SAVE"]
    assert actions == cycle * 2


def test_plain_pytorch_profiler_finds_the_same_bottleneck():
    # 스케줄: 1스텝 건너뛰고 1스텝 워밍업한 뒤 3스텝을 기록하므로 배치가 5개 필요합니다.
    model, loader = small_model_and_loader(n=40)
    averages = {event.key: event for event in tip7.profile_plain_loop(model, loader, steps=3)}
    fetch, step = averages["fetch_batch"], averages["train_step"]
    assert fetch.count == step.count == 3
    assert fetch.cpu_time_total > step.cpu_time_total


def test_article_profile_true_fails_today():
    with pytest.raises(
        TypeError,
        match=re.escape("Trainer.__init__() got an unexpected keyword argument 'profile'"),
    ) as excinfo:
        tip7.article_profile()
    assert page_quotes("tips/07-profiler.md", str(excinfo.value))


def test_article_profiler_import_path_fails_today():
    with pytest.raises(
        ModuleNotFoundError, match=re.escape("No module named 'pytorch_lightning.profiler'")
    ) as excinfo:
        tip7.article_advanced_profiler()
    assert page_quotes("tips/07-profiler.md", str(excinfo.value))


def test_main_runs_on_cpu(capsys):
    tip7.main("cpu", max_steps=8)
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert tip7.FETCH_ACTION in out and "← 데이터 가져오기" in out
    assert "이것이 병목입니다" in out
    assert re.search(r"데이터 가져오기: [\d.]+ s → [\d.]+ s", out)
