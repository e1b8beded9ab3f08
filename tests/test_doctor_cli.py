"""`python -m torchdoctor`를 새 프로세스로: 명령, spawn 워커, 작업의 예외, Ctrl-C, torchrun 환경,
GPU 점검의 CPU 실행, 설치 꾸러미(wheel). 프로세스를 띄우므로 모두 slow입니다."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "tests" / "doctor_jobs"
pytestmark = pytest.mark.slow
FAST = ["--skip-steps", "1", "--steps", "5", "--no-fix"]


def environment(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        if key not in extra:
            env.pop(key, None)
    return env


def doctor(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env or environment(),
        timeout=timeout,
    )


def plain(script: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(JOBS / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=120,
    )


def test_the_jobs_stdout_is_byte_identical_and_the_report_goes_to_stderr(tmp_path):
    result = doctor(*FAST, "--json", str(tmp_path / "r.json"), str(JOBS / "sync_loop.py"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == plain("sync_loop.py").stdout
    assert "찾은 것 2개" in result.stderr and "Traceback" not in result.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {item["page"] for item in data["findings"]} == {"tip3"}


def test_the_script_sees_its_own_argv_name_and_path():
    result = doctor(*FAST, str(JOBS / "args_echo.py"), "--epochs", "3", "-x")
    expected = plain("args_echo.py", "--epochs", "3", "-x").stdout
    assert result.stdout == expected
    assert result.stdout.startswith("__main__") and "'--epochs', '3', '-x'" in result.stdout


def test_spawn_workers_find_a_dataset_class_defined_in_the_script():
    result = doctor(*FAST, str(JOBS / "spawn_workers.py"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == plain("spawn_workers.py").stdout


def test_a_missing_script_says_so_in_korean_and_exits_2():
    result = doctor("no_such_train.py")
    assert result.returncode == 2
    assert "스크립트 파일을 찾을 수 없습니다" in result.stderr and "Traceback" not in result.stderr


def test_a_script_that_raises_shows_its_own_traceback_then_a_korean_summary():
    result = doctor(*FAST, str(JOBS / "crash.py"))
    assert result.returncode == 1
    stderr = result.stderr
    assert stderr.count("Traceback (most recent call last):") == 1
    assert "ValueError: 작업의 오류입니다" in stderr
    traceback_part = stderr.split("ValueError")[0]
    assert "crash.py" in traceback_part and "torchdoctor" not in traceback_part
    assert "작업이 ValueError로 멈췄습니다" in stderr and "스텝 4개" in stderr


def test_a_job_without_optimizer_steps_is_told_what_the_doctor_needs():
    result = doctor(*FAST, str(JOBS / "no_optimizer.py"))
    assert result.returncode == 0
    assert "옵티마이저 스텝을 하나도 보지 못했습니다" in result.stderr


def test_a_job_that_never_reaches_the_window_says_how_many_steps_it_needs():
    result = doctor("--skip-steps", "20", "--no-fix", str(JOBS / "sync_loop.py"))
    assert "시간 창에 이르지 못했습니다" in result.stderr and "--skip-steps" in result.stderr


def test_ctrl_c_reports_what_was_measured_so_far():
    process = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", *FAST, str(JOBS / "endless.py")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert "Ctrl-C로 멈췄습니다" in stderr and "Traceback" not in stderr
    assert "시간 창 5/5개" in stderr


def test_under_torchrun_the_report_says_which_rank_it_saw(tmp_path):
    env = environment(RANK="1", WORLD_SIZE="2", LOCAL_RANK="1")
    result = doctor(*FAST, "--json", str(tmp_path / "r.json"), str(JOBS / "sync_loop.py"), env=env)
    assert result.returncode == 0, result.stderr
    assert "torchrun 프로세스 2개 가운데 순위(rank) 1" in result.stderr
    assert json.loads((tmp_path / "r.rank1.json").read_text(encoding="utf-8"))["rank"]["rank"] == 1


def test_the_gpu_check_says_there_is_no_gpu_and_fails_without_a_traceback():
    result = subprocess.run(
        ["bash", "tools/gpu_check.sh"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment(PYTHON=sys.executable),
        timeout=120,
    )
    assert result.returncode != 0
    assert "CUDA GPU를 찾지 못했습니다" in result.stderr and "Traceback" not in result.stderr


def test_the_wheel_holds_only_torchdoctor_and_needs_only_torch(tmp_path):
    # 저장소에 build/를 남기지 않도록 꾸러미를 이루는 파일만 임시 폴더로 옮겨 빌드합니다
    source = tmp_path / "source"
    shutil.copytree(
        ROOT / "torchdoctor", source / "torchdoctor", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", source)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            str(source),
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("torchdoctor-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    code = [n for n in names if ".dist-info/" not in n]
    assert code and all(n.startswith("torchdoctor/") for n in code), code
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [
        line
        for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    assert requires == ["Requires-Dist: torch>=2.4"]
    assert {"torchdoctor/cli.py", "torchdoctor/__main__.py", "torchdoctor/rules.py"} <= set(code)
    assert "torchdoctor/pages.json" in code  # 보고서가 페이지의 제목과 주소를 읽는 표


def test_the_torch_free_modules_import_without_torch():
    # 사이트 빌드와 훅이 쓰는 모듈은 torch를 가져오지 않습니다.
    code = (
        "import sys, torchdoctor, torchdoctor.catalog, torchdoctor.report, torchdoctor.rules,"
        " torchdoctor.words, torchdoctor.stats; assert 'torch' not in sys.modules, 'torch'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
