"""benchmarks/plugin.py의 테스트: `pytest --benchmark`와 README의 GPU 명령이 약속대로 동작하는지.

실제 `pytest` 프로세스를 저장소의 임시 복사본(benchmarks, guide, snippets와 pytest 설정)에서
실행합니다. 복사본의 `results/`가 발행할 자리이고 `test-output/`이 측정을 남기는 자리이므로,
저장소의 `results/`와 `test-output/`은 건드리지 않습니다. 복사본의 팁 4 벤치마크는 CPU 크기를
작게 바꿔 몇 초 안에 끝납니다(시간이 아니라 흐름을 시험합니다). 프로세스는 모듈을 시작할 때
한꺼번에 띄우고, 테스트마다 자기 실행의 결과를 기다립니다(2코어에서 차례로 띄우면 몇 분입니다).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from guide import registry
from measuring import checks, plugin, timing
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
    """벤치마크를 실행하는 데 필요한 것만 복사하고, 팁 4의 CPU 크기를 작게 줄입니다. 팁 4 스니펫의
    Lightning 부분도 뺍니다: 벤치마크는 쓰지 않는데, 실행마다 lightning을 import하느라 2초씩
    걸렸습니다(이 파일의 실행은 열 개가 넘습니다)."""
    for name in (
        "benchmarks",
        "measuring",
        "results_format",
        "report",
        "torchdoctor",
        "guide",
        "snippets",
    ):
        shutil.copytree(ROOT / name, destination / name,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, destination / name)
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


PLUGINS = {
    "skip_create": (
        "import pytest\n\n"
        "def pytest_runtest_setup(item):\n"
        "    if 'test_create' in item.name:\n"
        "        pytest.skip('테스트가 일부러 건너뜁니다')\n"
    ),
    "fail_ceiling": (
        "def pytest_runtest_call(item):\n"
        "    if 'ceiling' in item.name:\n"
        "        raise RuntimeError('천장 측정이 실패했습니다(테스트가 일부러 냄)')\n"
    ),
    "interrupt": (
        "def pytest_runtest_call(item):\n"
        "    raise KeyboardInterrupt\n"
    ),
}  # fmt: skip


@dataclass
class Run:
    """복사본 하나에서 띄운 pytest 프로세스 하나."""

    project: Path
    process: subprocess.Popen
    old: Path | None = None
    old_bytes: bytes | None = None
    _result: subprocess.CompletedProcess | None = None

    def result(self) -> subprocess.CompletedProcess:
        if self._result is None:
            try:
                out, err = self.process.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                raise
            self._result = subprocess.CompletedProcess(self.process.args, self.process.returncode,
                                                       out, err)  # fmt: skip
        return self._result

    @property
    def published(self) -> Path:
        return self.project / "results"

    @property
    def local(self) -> Path:
        return self.project / "test-output" / "results"

    def published_unchanged(self) -> bool:
        files = list(self.published.iterdir())
        return files == [self.old] and self.old.read_bytes() == self.old_bytes


def start(tmp: Path, *args, old=None, plugin=None, env=None, project=None) -> Run:
    project = project or copy_for_benchmarks(tmp)
    extra = []
    if plugin:
        (project / f"{plugin}.py").write_text(PLUGINS[plugin], encoding="utf-8")
        extra = ["-p", plugin]
    run_env = {**os.environ, "SOURCE_COMMIT": SOURCE_COMMIT}
    run_env.pop("PYTEST_ADDOPTS", None)  # 이 테스트를 부른 pytest의 옵션이 섞이지 않게
    run_env.update(env or {})
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *extra, *args]
    old_path = write_named(project / "results", old(project)) if old else None
    process = subprocess.Popen(command, cwd=project, env=run_env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    return Run(project, process, old_path, old_path.read_bytes() if old_path else None)


PUBLISH = ("--benchmark", "--publish", "--budget", "0.2", "--seed", "1234")
RUNS = {
    "subset": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, old=old_document),
    # 장치 검사는 페이지 검사보다 먼저라서, 천장 하나만 재도 같은 이유로 거절합니다.
    "other-torch": lambda tmp: start(
        tmp, CEILING, *PUBLISH, old=lambda p: old_document(p, torch="2.0.0+cpu")
    ),
    "less": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, old=old_document, plugin="skip_create"),
    "partial": lambda tmp: start(tmp, CEILING, *PUBLISH, old=old_document),
    "failed": lambda tmp: start(tmp, BENCH_TIP4, "-k", "rand or ceiling", *PUBLISH,
                                old=old_document, plugin="fail_ceiling"),  # fmt: skip
    "time-limit": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, "--max-minutes", "0.0001",
                                    old=old_document),  # fmt: skip
    "benchmark-skip": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, "--benchmark-skip",
                                        old=old_document),  # fmt: skip
    "benchmark-skip-addopts": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, old=old_document,
                                                env={"PYTEST_ADDOPTS": "--benchmark-skip"}),
    "interrupted": lambda tmp: start(tmp, BENCH_TIP4, *PUBLISH, old=old_document,
                                     plugin="interrupt"),  # fmt: skip
    "gpu-dry-run": lambda tmp: start(
        tmp, BENCH_TIP4, BENCH_TIP5, *readme_gpu_command()[3:], "--dry-run",
        "--results-dir", str(tmp / "dry"),
    ),  # README의 명령을 두 페이지로 줄여서(전체는 2코어에서 5분)
    "plain": lambda tmp: start(tmp, BENCH_TIP4, BENCH_TIP5),
    "unknown-names": lambda tmp: start(tmp, BENCH_TIP4, project=unknown_names(tmp)),
}  # fmt: skip
NEEDS = {}  # 테스트 이름 → 쓰는 실행(아래 uses가 채웁니다)


def uses(*names):
    def register(test):
        NEEDS[test.__name__] = names
        return test

    return register


def unknown_names(tmp: Path) -> Path:
    """P11: 레지스트리에 없는 묶음과 변형을 쓰는 벤치마크(복사본의 팁 4를 고쳐 심습니다)."""
    project = tmp / "planted"
    copy_for_benchmarks(project)
    bench = project / BENCH_TIP4
    text = bench.read_text(encoding="utf-8")
    text = text.replace('compare("ceiling")', 'compare("no-such-group")')
    text = text.replace('group.add("create-on-device", fast', 'group.add("no-such-variant", fast')
    assert "no-such-group" in text and "no-such-variant" in text
    bench.write_text(text, encoding="utf-8")
    return project


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """고른 테스트가 쓰는 실행만 한꺼번에 띄웁니다."""
    chosen = set()
    for item in request.session.items:
        if item.module is request.module:
            params = getattr(item, "callspec", None)
            named = params.params.get("name") if params else None
            chosen |= {named} if named in RUNS else set(NEEDS.get(item.originalname, ()))
    started = {}
    try:
        for name in sorted(chosen):
            started[name] = RUNS[name](tmp_path_factory.mktemp(name))
        yield started
    finally:
        for run in started.values():
            if run.process.poll() is None:
                run.process.kill()
                run.process.communicate()


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


@uses("other-torch")
def test_a_file_from_another_torch_version_is_left_alone(runs):
    # 다른 CPU 기능(cpu_flags)이나 코어 수도 같은 길로 거절합니다: tests/test_session.py
    run, field = runs["other-torch"], "torch"
    result = run.result()
    assert result.returncode == 1, result.stdout[-3000:]
    assert "예전 결과와 장치 또는 torch 버전이 다릅니다" in result.stdout and field in result.stdout
    assert run.published_unchanged()
    assert f"발행하지 못한 측정은 {run.local}에 남겼습니다" in result.stdout
    [local] = run.local.glob("*.json")
    assert "tip4" in results_file.load(local)["pages"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("less", "예전에 잰 묶음을 이번에는 재지 않았습니다: arange, rand, zeros"),
        ("partial", "잰 적도, 재지 않은 이유도 없는 묶음이 있습니다: arange, rand, zeros"),
        ("failed", "실패한 측정이 1개 있습니다"),
        # P1: --publish를 주고 거절을 봅니다
        ("time-limit", "시간 한도에 걸려 4개를 재지 못했습니다"),
        ("benchmark-skip", "--benchmark-skip으로 4개 측정을 건너뛰어 아무것도 발행하지 않았습니다"),
        ("benchmark-skip-addopts",
         "--benchmark-skip으로 4개 측정을 건너뛰어 아무것도 발행하지 않았습니다"),
    ],
)  # fmt: skip
@uses("less", "partial", "failed", "time-limit", "benchmark-skip", "benchmark-skip-addopts")
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


@uses("partial")
def test_a_node_id_selection_still_keeps_its_measurement_locally(runs):
    run = runs["partial"]
    run.result()
    [local] = run.local.glob("*.json")
    [entry] = results_file.load(local)["pages"]["tip4"]["benchmarks"]
    assert entry["key"] == "device-copy" and entry["role"] == "ceiling" and entry["rounds"] >= 9


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


def test_help_lists_every_project_option_and_a_bad_thread_count_stops_in_korean():
    # argparse가 도움말을 %-서식으로 채우므로 "±5%" 같은 글자 하나가 `pytest --help`를 깨뜨립니다.
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    shown = subprocess.run([*command, "--help"], cwd=ROOT, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    for option in ("--benchmark", "--publish", "--sweep", "--budget", "--threads", "--seed"):
        assert f"  {option}" in shown.stdout
    bad = subprocess.run([*command, "--benchmark", "--threads", "0", "--collect-only", BENCH_TIP4],
                         cwd=ROOT, capture_output=True, text=True)  # fmt: skip
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


@uses("unknown-names")
def test_plain_pytest_stops_a_benchmark_with_a_group_or_variant_not_in_the_registry(runs):
    """P11: CI가 실행하는 평소 pytest에서도 이름을 레지스트리와 맞춰 봅니다."""
    result = runs["unknown-names"].result()
    assert result.returncode == pytest.ExitCode.TESTS_FAILED
    assert "tip4: 묶음 'no-such-group'" in result.stdout
    assert "tip4: 변형 'no-such-variant'" in result.stdout
    assert re.search(r"4 failed", result.stdout)


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
