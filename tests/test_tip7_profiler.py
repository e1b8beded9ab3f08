"""snippets/tip7_profiler.py의 테스트: 두 데이터셋이 같은지, 프로파일러가 병목을 찾는지 봅니다."""

import re

import lightning as L
import pytest
import torch
from lightning.pytorch.profilers import PyTorchProfiler, SimpleProfiler
from torch.utils.data import DataLoader

from snippets import tip7_profiler as tip7
from tests.site_build import page_quotes


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


def test_simple_profiler_report_lists_data_fetching_and_the_training_step(tmp_path):
    report = tip7.fit_with_profiler("simple", tip7.make_dataset("slow"), 8, tmp_path)
    rows = tip7.parse_simple_report(report)
    # 페이지가 가리키는 두 행이 보고서에 있습니다. 어느 쪽이 오래 걸렸는지는 측정이라서 테스트가
    # 단언하지 않고, 벤치마크가 잰 보고서를 "측정 결과"에 그대로 싣습니다.
    actions = [name for name, _, _ in rows]
    assert tip7.FETCH_ACTION in actions and tip7.TRAINING_STEP_ACTION in actions
    assert all(total >= 0 and 0 <= share <= 100 for _, total, share in rows)
    # 보고서는 파일(fit-simple.txt)로 남고, 반환값은 그 파일의 내용입니다.
    assert (tmp_path / "fit-simple.txt").read_text(encoding="utf-8") == report


@pytest.fixture
def feature_calls(monkeypatch):
    """expensive_features가 불린 횟수. 데이터셋은 부를 때마다 이 이름을 모듈에서 찾습니다."""
    calls = []
    original = tip7.expensive_features

    def counting(signal, *args, **kwargs):
        calls.append(signal.shape)
        return original(signal, *args, **kwargs)

    monkeypatch.setattr(tip7, "expensive_features", counting)
    return calls


def test_slow_dataset_computes_features_on_every_fetch(tmp_path, feature_calls):
    steps, batch_size = 4, 16
    tip7.fit_with_profiler(None, tip7.make_dataset("slow"), steps, tmp_path, batch_size=batch_size)
    # 스텝마다 배치 크기만큼 다시 계산합니다(Lightning이 다음 배치를 한 개 미리 꺼낼 수 있습니다).
    assert steps * batch_size <= len(feature_calls) <= (steps + 1) * batch_size


def test_precomputed_dataset_computes_nothing_while_training(tmp_path, feature_calls):
    # 병목을 고친 효과를 시간이 아니라 일의 양으로 봅니다: 학습 중에는 한 번도 계산하지 않습니다.
    dataset = tip7.make_dataset("fast", n=64)
    assert len(feature_calls) == 64  # 만들 때 샘플마다 한 번
    feature_calls.clear()
    tip7.fit_with_profiler(None, dataset, 4, tmp_path, batch_size=16)
    assert feature_calls == []


def test_same_report_file_is_replaced_not_appended(tmp_path):
    slow = tip7.parse_simple_report(
        tip7.fit_with_profiler("simple", tip7.make_dataset("slow", n=32), 4, tmp_path)
    )
    fast = tip7.parse_simple_report(
        tip7.fit_with_profiler("simple", tip7.make_dataset("fast", n=32), 4, tmp_path)
    )
    # 같은 폴더와 같은 파일 이름을 다시 써도 보고서가 이어 붙지 않습니다.
    assert len(fast) == len(slow)
    assert [name for name, _, _ in fast].count(tip7.FETCH_ACTION) == 1


# cProfile 표의 한 줄: "ncalls tottime percall cumtime percall 파일:줄(함수)".
CPROFILE_ROW = re.compile(r"^\s*(\d+)(?:/\d+)?\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S+)$", re.M)


def test_advanced_profiler_report_names_the_planted_function(tmp_path):
    steps, batch_size = 4, 16
    report = tip7.fit_with_profiler("advanced", tip7.make_dataset("slow", n=32), steps, tmp_path)
    # 데이터를 가져오는 동작의 cProfile 표 안에 __getitem__과 심어 둔 함수가 나와야 합니다.
    fetch_stats = report.split(f"Profile stats for: {tip7.FETCH_ACTION}")[1]
    fetch_stats = fetch_stats.split("Profile stats for:")[0]
    assert "Ordered by: cumulative time" in fetch_stats
    calls = {where: int(n) for n, where in CPROFILE_ROW.findall(fetch_stats)}
    getitem = [n for where, n in calls.items() if where.endswith("(__getitem__)")]
    planted = [n for where, n in calls.items() if where.endswith("(expensive_features)")]
    # 샘플 하나를 꺼낼 때마다 한 번씩 불렸습니다: 호출 횟수가 꺼낸 샘플 수와 같습니다.
    assert planted and getitem and planted == getitem
    assert planted[0] >= steps * batch_size and planted[0] % batch_size == 0
    # 학습 스텝의 표에는 이 함수가 나오지 않습니다. 고칠 곳은 데이터 쪽입니다.
    step_stats = report.split(f"Profile stats for: {tip7.TRAINING_STEP_ACTION}")[1]
    step_stats = step_stats.split("Profile stats for:")[0]
    assert "(expensive_features)" not in step_stats


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


@pytest.mark.parametrize("kind", ["slow", "fast"])
def test_plain_pytorch_profiler_records_named_steps_and_the_feature_ops(kind):
    # 스케줄: 1스텝 건너뛰고 1스텝 워밍업한 뒤 3스텝을 기록하므로 배치가 5개 필요합니다.
    dataset = tip7.make_dataset(kind, n=40, length=32)
    model = tip7.FeatureRegressor(features=32)
    loader = DataLoader(dataset, batch_size=8)
    averages = {event.key: event for event in tip7.profile_plain_loop(model, loader, steps=3)}
    assert averages["fetch_batch"].count == averages["train_step"].count == 3
    # 느린 데이터셋에서는 기록한 3스텝 동안 샘플마다 필터를 FEATURE_ROUNDS번 건 것이 보입니다.
    tanh = averages["aten::tanh"].count if "aten::tanh" in averages else 0
    assert tanh == (3 * 8 * tip7.FEATURE_ROUNDS if kind == "slow" else 0)


def test_article_profile_true_fails_today():
    with pytest.raises(
        TypeError,
        match=re.escape("Trainer.__init__() got an unexpected keyword argument 'profile'"),
    ) as excinfo:
        tip7.article_profile()
    assert page_quotes("tips/07-profiler.md", str(excinfo.value))


def test_profiler_true_passes_the_trainer_but_fit_fails():
    # 당시의 인자 profiler=True(bool)는 Lightning 1.3에서 지워졌습니다(#6164). 지금은 Trainer가
    # 그대로 받아 두었다가 fit에서 bool을 프로파일러처럼 부르다 멈춥니다.
    from lightning.pytorch.demos.boring_classes import BoringModel

    trainer = L.Trainer(
        profiler=True,
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    with pytest.raises(AttributeError, match="'bool' object has no attribute 'profile'"):
        trainer.fit(BoringModel())


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
