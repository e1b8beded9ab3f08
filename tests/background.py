"""테스트 세션이 처음에 다른 프로세스로 띄워 두고 끝에 결과를 받는 긴 일(노트북 실행,
브라우저 검사)이 함께 쓰는 부분입니다.

평소 pytest는 2코어의 절반 남짓만 씁니다. 이 일들은 남는 CPU로만 돌고, 그 결과를 기다리는
테스트는 맨 뒤에 둡니다(tests/conftest.py). 그래도 다른 테스트가 얼마간 느려집니다
(CONTRIBUTING.md). 세션이 결과를 기다리기 시작하면 모든 코어를 쓰게 풉니다(release_all).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from tests.site_build import ROOT

FALLBACK_NICENESS = 10  # SCHED_IDLE이 없는 운영체제(macOS)에서 대신 올리는 nice 값


def lower_priority(back_cores_only: bool) -> None:
    """이 프로세스와 그 아래 모든 프로세스가 남는 CPU로만 돌게 합니다(Linux의 SCHED_IDLE).

    nice만 올리면 root로 도는 Chromium이 자기 스레드를 nice -8까지 되돌려 다른 테스트를
    밀어냈습니다. SCHED_IDLE은 nice와 따로인 스케줄링 정책이라 그렇게 되돌아가지 않습니다.
    back_cores_only이면 뒤쪽 절반의 코어에만 둡니다(CONTRIBUTING.md의 캐시 이야기).
    """
    if hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(FALLBACK_NICENESS)
    if back_cores_only and hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cores[len(cores) // 2 :])


STARTED: list[subprocess.Popen] = []  # 이 세션에서 띄운 배경 일(release_all이 풉니다)


def start(module: str, args: list[str], log: Path) -> subprocess.Popen:
    """`python -m module args...`를 띄우고 출력은 log에 씁니다."""
    with open(log, "w", encoding="utf-8") as out:
        # 새 세션으로 띄워, 테스트가 일찍 끝나면 그 아래 프로세스까지 한 번에 멈춥니다(stop).
        process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    STARTED.append(process)
    return process


def release_all() -> None:
    """띄운 배경 일이 다시 모든 코어를 쓰게 합니다. 테스트 세션이 그 결과를 기다리기만 할 때
    부릅니다: 그때는 앞쪽 코어가 놀고 있으므로 뒤쪽에 묶어 둘 까닭이 없습니다. 코어 지정은
    스레드마다 있어, 이미 떠 있는 프로세스의 모든 스레드를 바꿉니다. 노트북 커널처럼 새 세션을
    여는 자식도 부모를 따라가 찾습니다(psutil의 children)."""
    if not hasattr(os, "sched_setaffinity"):
        return
    cores = os.sched_getaffinity(0)
    for process in STARTED:
        # 끝나서 거둔 일은 건너뜁니다. 그 번호는 이제 다른 프로세스의 것일 수 있습니다.
        if process.poll() is not None:
            continue
        try:
            root = psutil.Process(process.pid)
            family = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:  # 이미 끝난 일
            continue
        for member in family:
            with contextlib.suppress(psutil.NoSuchProcess, OSError):  # 그 사이에 끝난 것
                for thread in member.threads():
                    os.sched_setaffinity(thread.id, cores)


def wait(process: subprocess.Popen, log: Path, timeout_s: float | None, subject: str) -> None:
    """process가 끝나기를 기다립니다(timeout_s가 None이면 끝까지). subject는 메시지의 주어입니다."""
    release_all()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop(process)
        problem = f"{timeout_s:.0f}초 안에 끝나지 않아 멈췄습니다"
    else:
        problem = f"중간에 멈췄습니다(종료 코드 {process.returncode})"
    tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
    assert process.returncode == 0, f"{subject} {problem}:\n{tail}"


def stop(process: subprocess.Popen) -> None:
    """아직 돌고 있으면 프로세스 무리 전체를 멈춥니다."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
