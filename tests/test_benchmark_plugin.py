"""measuring/plugin.py의 테스트: `pytest --benchmark`와 README의 GPU 명령이 약속대로 동작하는지.

pytest의 `pytester`로 저장소의 임시 복사본(benchmarks, guide, snippets와 pytest 설정)에서 pytest를
이 프로세스 안에서 돌립니다(torch를 한 번만 import합니다). 복사본의 `results/`가 발행할 자리이고
`test-output/`이 측정을 남기는 자리이므로, 저장소의 `results/`와 `test-output/`은 건드리지
않습니다. 복사본의 팁 4 벤치마크는 CPU 크기를 작게 바꿔 몇 초 안에 끝납니다.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from guide import registry
from measuring import checks, plugin, timing
from measuring import session as measurement
from report import summary
from results_format import provenance, results_file, schema, validation
from tests.results_sample import ratio, sample_document, section, write, write_named
from tests.site_build import ROOT

BENCH_TIP4 = "benchmarks/bench_tip4_create_on_device.py"
BENCH_TIP5 = "benchmarks/bench_tip5_ddp.py"
CEILING = f"{BENCH_TIP4}::test_device_copy_ceiling"
SOURCE_COMMIT = "c0ffee" + "0" * 34
TIMEOUT_S = 600


def readme_gpu_command() -> list[str]:
    """README의 GPU 명령에서 pytest를 부르는 부분의 인자(`-m pytest benchmarks ...`)입니다."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.DOTALL)
    command = next(block for block in blocks if "--gpu" in block)
    return shlex.split(command.split("&&")[-1])[1:]  # 맨 앞의 `.venv/bin/python`을 뺍니다


def test_readme_gpu_command_is_the_one_documented():
    assert readme_gpu_command() == ["-m", "pytest", "benchmarks", "--benchmark", "--gpu",
                                    "--publish"]  # fmt: skip


# --- 복사본과 실행 -----------------------------------------------------------------------------


def copy_for_benchmarks(destination: Path) -> Path:
    """벤치마크를 실행하는 데 필요한 것만 복사하고, 팁 4의 CPU 크기를 작게 줄입니다(시간이 아니라
    흐름을 시험합니다). 팁 4 스니펫의 Lightning 부분도 뺍니다: 벤치마크는 쓰지 않습니다."""
    for name in ("benchmarks", "guide", "snippets"):
        shutil.copytree(ROOT / name, destination / name,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copy(ROOT / "conftest.py", destination / "conftest.py")
    bench = destination / BENCH_TIP4
    text = bench.read_text(encoding="utf-8")
    assert '"cpu": 1 << 24' in text
    bench.write_text(text.replace('"cpu": 1 << 24', '"cpu": 1 << 12'), encoding="utf-8")
    snippet = destination / "snippets" / "tip4_create_on_device.py"
    text = snippet.read_text(encoding="utf-8")
    for name in ("lightning_import", "lightning"):
        start, end = f"# --8<-- [start:{name}]\n", f"# --8<-- [end:{name}]\n"
        assert start in text and end in text, f"팁 4 스니펫에 {name} 구역이 없습니다"
        text = text[: text.index(start)] + text[text.index(end) + len(end) :]
    assert "lightning" not in text and "L." not in text
    snippet.write_text(text, encoding="utf-8")
    return destination


def this_machine() -> dict:
    return provenance.describe_device(torch.device("cpu"))


def old_document(project: Path, **device) -> dict:
    """이 컴퓨터에서 예전에 발행한 것처럼 만든 파일: 팁 3, 4(모든 묶음), 5.
    날짜와 커밋은 예전 것입니다."""
    changes = {"date": "2030-01-02T03:04:05Z", "commit": "1" * 40}
    pair = ratio(1.02, 0.98, 1.05)
    tip4 = []
    for group in ("rand", "zeros", "arange"):
        tip4.append(_entry(f"{group}-create-then-copy", group, "create-then-copy", "baseline"))
        tip4.append(_entry(f"{group}-create-on-device", group, "create-on-device", "recommended",
                           ratio=pair))  # fmt: skip
    tip4.append(_entry("device-copy", "ceiling", "device-copy", "ceiling"))
    loop = [_entry("item-every-step", "loop", "item-every-step", "baseline"),
            _entry("read-once", "loop", "read-once", "recommended", ratio=pair)]  # fmt: skip
    pages = {
        "tip3": section("tip3", project, loop, **changes),
        "tip4": section("tip4", project, tip4, **changes),
        "tip5": section("tip5", project, [], not_measured=[("dp-vs-ddp", "예전 이유")], **changes),
    }
    doc = {"schema_version": schema.SCHEMA_VERSION, "dry_run": False,
           "device": this_machine() | device, "pages": pages}  # fmt: skip
    return validation.validate(doc, "old")


def _entry(key, group, variant, role, ratio=None):
    return {"key": key, "group": group, "variant": variant, "role": role, "computed": False,
            "median_s": 0.5, "iqr_s": 0.01, "rounds": 9, "iterations": 1, "params": {},
            "metrics": {}, "ceiling": None, "ratio": ratio}  # fmt: skip


class FailCeiling:
    def pytest_runtest_call(self, item):
        if "ceiling" in item.name:
            raise RuntimeError("천장 측정이 실패했습니다(테스트가 일부러 냄)")


class Interrupt:
    def pytest_runtest_call(self, item):
        raise KeyboardInterrupt


@dataclass
class Run:
    """복사본 하나에서 이 프로세스 안에서(pytester) 돌린 pytest 한 번."""

    project: Path
    returncode: int
    stdout: str
    stderr: str
    old: Path | None = None
    old_bytes: bytes | None = None

    def result(self) -> Run:
        return self

    @property
    def published(self) -> Path:
        return self.project / "results"

    @property
    def local(self) -> Path:
        return self.project / "test-output" / "results"

    def published_unchanged(self) -> bool:
        files = list(self.published.iterdir())
        return files == [self.old] and self.old.read_bytes() == self.old_bytes


@pytest.fixture
def run_in_copy(pytester, monkeypatch):
    """pytester의 폴더에 복사본을 만들고, 그 안에서 pytest를 이 프로세스 안에서 돌리는 함수.

    torch와 측정 플러그인은 이 프로세스에 이미 import되어 있으므로 다시 import하지 않습니다. 저장소
    경로를 가리키는 값(측정 플러그인의 ROOT와 결과 폴더, 레지스트리의 ROOT)을 복사본으로 돌리고,
    복사본의 bench 파일과 스니펫을 import하도록 저장소의 것은 sys.modules에서 잠시 뺍니다. 측정이
    바꾸는 torch 스레드 수와 환경 변수는 끝나면 되돌립니다(monkeypatch)."""
    project = copy_for_benchmarks(pytester.path)
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\npython_files = ["bench_*.py"]\npythonpath = ["."]\n'
    )
    for name in [m for m in sys.modules if m.split(".")[0] in ("benchmarks", "snippets")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(measurement, "ROOT", project)
    monkeypatch.setattr(measurement, "LOCAL_RESULTS", project / "test-output" / "results")
    monkeypatch.setattr(measurement, "PUBLISHED_RESULTS", project / "results")
    monkeypatch.setattr(plugin, "BENCH_DIR", project / "benchmarks")
    monkeypatch.setattr(registry, "ROOT", project)
    monkeypatch.setenv("SOURCE_COMMIT", SOURCE_COMMIT)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # 이 테스트를 부른 pytest의 옵션
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", ""))
    threads = torch.get_num_threads()

    def run(*args, old=None, plugins=(), env=None) -> Run:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        old_path = write_named(project / "results", old(project)) if old else None
        try:
            result = pytester.runpytest(
                "-p", "no:cacheprovider", *args, plugins=list(plugins), no_reraise_ctrlc=True
            )
        finally:
            torch.set_num_threads(threads)
        return Run(project, result.ret, "\n".join(result.outlines), "\n".join(result.errlines),
                   old_path, old_path.read_bytes() if old_path else None)  # fmt: skip

    run.project = project
    return run


PUBLISH = ("--benchmark", "--publish", "--budget", "0.2", "--seed", "1234")
# 발행 규칙 자체(다른 torch 버전, 덜 잰 페이지, 일부만 잰 묶음, 레지스트리에 없는 이름)는
# tests/test_session.py와 tests/test_measure.py가 플러그인 없이 확인합니다. 여기서는 pytest의 훅이
# 그 규칙까지 이어지는 길(옵션, 실패와 건너뜀의 집계, 중단, 시간 한도, 드라이 런)만 봅니다.
RUNS = {
    "subset": lambda run: run(BENCH_TIP4, *PUBLISH, old=old_document),
    "failed": lambda run: run(BENCH_TIP4, "-k", "rand or ceiling", *PUBLISH, old=old_document,
                              plugins=[FailCeiling()]),  # fmt: skip
    "time-limit": lambda run: run(BENCH_TIP4, *PUBLISH, "--max-minutes", "0.0001",
                                  old=old_document),  # fmt: skip
    "benchmark-skip": lambda run: run(BENCH_TIP4, *PUBLISH, "--benchmark-skip", old=old_document),
    "benchmark-skip-addopts": lambda run: run(BENCH_TIP4, *PUBLISH, old=old_document,
                                              env={"PYTEST_ADDOPTS": "--benchmark-skip"}),
    "interrupted": lambda run: run(BENCH_TIP4, *PUBLISH, old=old_document, plugins=[Interrupt()]),
    "gpu-dry-run": lambda run: run(
        BENCH_TIP4, BENCH_TIP5, *readme_gpu_command()[3:], "--dry-run",
        "--results-dir", str(run.project / "dry"), "-n", "2",
    ),  # README의 명령을 두 페이지로 줄여서(전체는 2코어에서 5분). -n 2(평소 pytest의 작업자)를
    # 주어도 측정은 한 프로세스에서 합니다(measuring/plugin.py).
    "plain": lambda run: run(BENCH_TIP4, BENCH_TIP5),
}  # fmt: skip


@pytest.fixture
def runs(run_in_copy, request):
    """테스트가 쓰는 실행 하나를 돌려 {이름: 실행}으로 줍니다(이름은 매개변수 name이나 uses)."""
    params = getattr(request.node, "callspec", None)
    named = params.params.get("name") if params else None
    names = [named] if named in RUNS else NEEDS[request.node.originalname]
    assert len(names) == 1, names
    return {names[0]: RUNS[names[0]](run_in_copy)}


NEEDS = {}  # 테스트 이름 → 쓰는 실행(아래 uses가 채웁니다)


def uses(*names):
    def register(test):
        NEEDS[test.__name__] = names
        return test

    return register


def summary_of(result) -> str:
    """터미널의 "측정 요약" 절(pytest가 붙이는 다음 절 앞까지)."""
    found = re.search(r"=+ 측정 요약 =+\n(.*?)(?=^=+ |\Z)", result.stdout, re.S | re.M)
    return found[1] if found else ""


def published_state() -> dict[str, str]:
    # results/doctor/(진단기 페이지의 예시 보고서)처럼 폴더도 있으므로 파일만 셉니다.
    return {
        str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((ROOT / "results").rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module", autouse=True)
def results_untouched():
    """어떤 실행도 저장소의 results/를 바꾸지 않습니다(모두 복사본에서 실행합니다)."""
    before = published_state()
    yield
    assert published_state() == before, "results/가 바뀌었습니다"


# --- 페이지 단위 발행(이슈 18 항목 1, 이슈 21) -------------------------------------------------


@uses("subset")
def test_publishing_one_bench_replaces_only_its_page_with_its_own_provenance(runs):
    run = runs["subset"]
    result = run.result()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    old = json.loads(run.old_bytes)
    new = results_file.load(run.old)
    assert list(new["pages"]) == ["tip3", "tip4", "tip5"] and new["device"] == old["device"]
    for kept in ("tip3", "tip5"):  # 다른 페이지는 바이트까지 그대로(같은 직렬화)
        assert json.dumps(new["pages"][kept]) == json.dumps(old["pages"][kept])
    measured = new["pages"]["tip4"]["measured"]
    assert measured["date"] != "2030-01-02T03:04:05Z" and measured["commit"] == SOURCE_COMMIT
    assert measured["seed"] == 1234 and measured["dirty"] is None
    assert measured["torch_threads"] == timing.CPU_THREADS  # --threads를 주지 않은 CPU 측정
    snippet = run.project / "snippets" / f"{registry.by_id('tip4').snippet}.py"
    assert measured["snippet_sha256"] == provenance.sha256(snippet)
    assert measured["benchmark_sha256"] == provenance.sha256(run.project / BENCH_TIP4)
    groups = new["pages"]["tip4"]["groups"]
    assert set(groups) == {"rand", "zeros", "arange", "ceiling"}
    assert len({info["seed"] for info in groups.values()}) == 4  # 묶음마다 기록한 시드
    assert all(info["rounds"] >= 9 for info in groups.values())
    [local] = run.local.glob("*.json")  # 측정은 test-output/에도 남습니다
    assert list(results_file.load(local)["pages"]) == ["tip4"]
    assert f"결과 파일을 썼습니다: {run.old}" in result.stdout


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("failed", "실패한 측정이 1개 있습니다"),
        # P1: --publish를 주고 거절을 봅니다
        ("time-limit", "시간 한도에 걸려 4개를 재지 못했습니다"),
        ("benchmark-skip", "--benchmark-skip으로 4개 측정을 건너뛰어 아무것도 발행하지 않았습니다"),
        ("benchmark-skip-addopts",
         "--benchmark-skip으로 4개 측정을 건너뛰어 아무것도 발행하지 않았습니다"),
    ],
)  # fmt: skip
def test_a_run_that_measured_less_than_it_replaces_is_refused(runs, name, reason):
    run = runs[name]
    result = run.result()
    assert result.returncode != 0, result.stdout[-3000:]
    assert reason in result.stdout, result.stdout[-3000:]
    assert "발행하지 않은 페이지 · " in result.stdout
    assert run.published_unchanged()
    assert f"발행하지 못한 측정은 {run.local}에 남겼습니다" in result.stdout
    assert "Skipping benchmark" not in summary_of(result)  # 영어 이유를 "재지 않음"으로 남기지 않음


@uses("failed")
def test_a_failing_ceiling_keeps_the_other_measurements_without_a_dangling_ceiling(runs):
    run = runs["failed"]
    result = run.result()
    assert "Traceback" not in summary_of(result)
    [local] = run.local.glob("*.json")
    entries = results_file.load(local)["pages"]["tip4"]["benchmarks"]
    assert {e["group"] for e in entries} == {"rand"}
    assert all(e["ceiling"] is None for e in entries)  # 없는 천장을 가리키지 않습니다
    assert "천장으로 잰 적이 없는 key" in result.stdout


@uses("interrupted")
def test_an_interrupted_run_writes_nothing(runs):
    run = runs["interrupted"]
    result = run.result()
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout[-2000:]
    assert "실행이 중단되어 결과 파일을 쓰지 않았습니다" in result.stdout
    assert run.published_unchanged() and not run.local.exists()


# --- README의 GPU 명령 -----------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="GPU가 있으면 드라이 런이 아니라 잽니다")
@uses("gpu-dry-run")
def test_the_gpu_command_dry_run_goes_end_to_end_on_cpu(runs):
    run = runs["gpu-dry-run"]
    result = run.result()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "측정 요약" in result.stdout
    assert "드라이 런이라서 results/에는 쓰지 않았습니다" in result.stdout
    [written] = (run.project / "dry").glob("*.json")
    assert written.name.startswith("dry-run-")
    doc = results_file.load(written)
    assert doc["dry_run"] is True and list(doc["pages"]) == ["tip4", "tip5"]
    assert {e["rounds"] for e in doc["pages"]["tip4"]["benchmarks"]} == {1}
    assert doc["pages"]["tip5"]["not_measured"][0]["group"] == "dp-vs-ddp"
    text = summary_of(result)
    assert re.search(r"재지 않음\(DP 대 DDP\): CUDA GPU가 없어서 재지 않았습니다", text)
    assert "test_dp_vs_ddp" not in text and "Skipped" not in text
    assert not run.published.exists() and not run.local.exists()


def fake_config(**options):
    defaults = dict(gpu=True, dry_run=False, benchmark=True, publish=False, sweep=False,
                    results_dir=None, max_minutes=None, seed=None, budget=None,
                    threads=None)  # fmt: skip
    option = types.SimpleNamespace(**(defaults | options))
    return types.SimpleNamespace(option=option, stash=pytest.Stash(),
                                 addinivalue_line=lambda name, line: None)  # fmt: skip


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인할 수 있습니다")
def test_gpu_flag_without_cuda_stops_before_measuring_in_korean():
    config = fake_config()
    with pytest.raises(pytest.UsageError, match="--gpu: CUDA GPU를 찾지 못했습니다") as caught:
        plugin.pytest_configure(config)
    assert "--dry-run" in str(caught.value) and plugin.RUN not in config.stash


def test_a_small_dev_shm_stops_the_gpu_run_through_the_option_path(monkeypatch):
    """P2: --gpu의 설정 단계(pytest_configure)가 멈추는지 봅니다. 메시지만 보지 않습니다."""
    monkeypatch.setattr(plugin.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(checks.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(1, 1, 64 << 20))  # fmt: skip
    config = fake_config()
    with pytest.raises(pytest.UsageError, match="/dev/shm의 여유 공간이 64 MiB뿐입니다"):
        plugin.pytest_configure(config)
    assert plugin.RUN not in config.stash  # 측정을 시작하지 않았습니다


def test_enough_dev_shm_or_a_dry_run_lets_the_gpu_run_start(monkeypatch):
    monkeypatch.setattr(plugin.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(checks.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(1, 1, 64 << 20))  # fmt: skip
    dry = fake_config(dry_run=True)
    plugin.pytest_configure(dry)
    assert dry.stash[plugin.RUN].dry_run and dry.stash[plugin.RUN].size_key == "quick"
    monkeypatch.setattr(checks.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(1, 1, 2 << 30))  # fmt: skip
    config = fake_config()
    plugin.pytest_configure(config)
    run = config.stash[plugin.RUN]
    assert run.device.type == "cuda" and run.max_seconds == 600 and run.settings.budget_s == 8.0


def test_the_method_page_states_the_round_time_and_thread_count_the_plugin_uses():
    text = (ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    gpu, cpu = (round(timing.MIN_ROUND_S[kind] * 1000) for kind in ("cuda", "cpu"))
    assert f"한 라운드는 GPU에서 {gpu} ms, CPU에서 {cpu} ms 이상입니다" in text
    assert f"`torch.set_num_threads({timing.CPU_THREADS})`" in text  # 스레드 절(#threads)


def test_options_reach_the_measurement_settings():
    run = plugin.new_run(fake_config(gpu=False, budget=0.2, seed=99, max_minutes=2.0).option)
    assert (run.settings.budget_s, run.seed, run.max_seconds) == (0.2, 99, 120.0)
    assert (
        plugin.new_run(fake_config(gpu=False).option).seed
        != plugin.new_run(fake_config(gpu=False).option).seed
    )  # 시드를 주지 않으면 실행마다 새로 뽑아 기록합니다


@pytest.mark.parametrize(("device", "requested", "expected"), [
    ("cpu", None, timing.CPU_THREADS), ("cpu", 2, 2), ("cuda", None, None), ("cuda", 3, 3),
])  # fmt: skip
def test_threads_option_sets_torch_and_spawned_processes(monkeypatch, device, requested, expected):
    before = torch.get_num_threads()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(plugin.torch.cuda, "is_available", lambda: device == "cuda")
    monkeypatch.setattr(checks, "gpu_problem", lambda: None)
    try:
        torch.set_num_threads(5)  # 바꾸지 않을 때를 알아볼 수 있게 기본값과 다른 값
        plugin.pytest_configure(fake_config(gpu=device == "cuda", threads=requested))
        assert torch.get_num_threads() == (expected or 5)
        assert os.environ.get("OMP_NUM_THREADS") == (str(expected) if expected else None)
        torch.set_num_threads(5)
        plugin.pytest_configure(fake_config(gpu=False, benchmark=False, threads=2))
        assert torch.get_num_threads() == 5  # 평소 pytest는 스레드를 건드리지 않습니다
    finally:
        torch.set_num_threads(before)


def test_help_lists_every_project_option_and_a_bad_thread_count_stops_in_korean(run_in_copy):
    # argparse가 도움말을 %-서식으로 채우므로 "±5%" 같은 글자 하나가 `pytest --help`를 깨뜨립니다.
    shown = run_in_copy("--help")
    assert shown.returncode == 0, shown.stderr[-2000:]
    for option in ("--benchmark", "--publish", "--sweep", "--budget", "--threads", "--seed"):
        assert f"  {option}" in shown.stdout
    bad = run_in_copy("--benchmark", "--threads", "0", "--collect-only", BENCH_TIP4)
    assert bad.returncode == 4 and "--threads: 1 이상의 정수여야 합니다: '0'" in bad.stderr


@pytest.mark.parametrize("text", ["0", "-1", "two"])
def test_threads_must_be_a_positive_integer_in_korean(text):
    with pytest.raises(argparse.ArgumentTypeError, match="1 이상의 정수여야 합니다"):
        timing.positive_int(text)
    assert timing.positive_int("3") == 3


# --- 평소 pytest -------------------------------------------------------------------------------


@uses("plain")
def test_plain_pytest_runs_each_benchmark_once_without_timing(runs):
    run = runs["plain"]
    result = run.result()
    assert result.returncode == 0, result.stdout[-2000:]
    assert "측정 요약" not in result.stdout
    assert not re.search(r"benchmark[^\n]*: \d+ tests", result.stdout)  # 시간 표가 없습니다
    assert not run.published.exists() and not run.local.exists()


# --- 끝에 알리는 오래된 결과 -------------------------------------------------------------------


def test_stale_results_are_listed_after_a_run(tmp_path, monkeypatch):
    for name in ("snippets", "benchmarks"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(registry, "ROOT", tmp_path)
    path = write_named(tmp_path / "results", sample_document(tmp_path))
    assert summary.stale_lines(tmp_path) == []
    changed = tmp_path / "benchmarks" / "bench_tip4_create_on_device.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 바뀐 줄\n", encoding="utf-8")
    [line] = summary.stale_lines(tmp_path)
    assert line == (
        f"{path.name} · 팁 4: 텐서를 장치에서 바로 만들기: 측정한 뒤 코드가 바뀌었습니다: "
        "benchmarks/bench_tip4_create_on_device.py(바뀜)"
    )
    write(tmp_path / "results" / "broken.json", {})
    assert any("broken.json의 device: 필수 항목이 없습니다" in x
               for x in summary.stale_lines(tmp_path))  # fmt: skip
