"""세션 처음에 띄워 남는 CPU로 돌리는 일(tests/background.py)이 약속대로 도는지 봅니다."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from tests import background, site_scan
from tests.conftest import USES_EVERY_CORE, session_order
from tests.site_build import ROOT

# 낮춘 프로세스 아래에서, root라면 Chromium처럼 nice를 -8로 되돌려 보고 정책과 nice를 찍습니다.
CHILD = """
import os
try:
    os.setpriority(os.PRIO_PROCESS, 0, -8)
except PermissionError:
    pass
print(os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
"""
PARENT = f"""
import subprocess, sys
from tests import background
background.lower_priority(back_cores_only=False)
subprocess.run([sys.executable, "-c", {CHILD!r}], check=True)
"""


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE은 Linux에만 있습니다")
def test_background_work_stays_idle_even_when_a_child_raises_its_priority():
    result = subprocess.run(
        [sys.executable, "-c", PARENT], cwd=ROOT, capture_output=True, text=True, check=True
    )
    policy, niceness = map(int, result.stdout.split())
    assert policy == os.SCHED_IDLE
    if os.geteuid() == 0:
        assert niceness == -8  # 되돌리기는 되었지만 정책은 그대로입니다


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="코어 지정은 Linux에만 있습니다")
@pytest.mark.parametrize("back_cores_only", [True, False])
def test_background_work_keeps_to_the_back_half_of_the_cores_when_asked(back_cores_only):
    code = "from tests import background; import os\n"
    code += f"background.lower_priority(back_cores_only={back_cores_only})\n"
    code += "print(sorted(os.sched_getaffinity(0)))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    cores = sorted(os.sched_getaffinity(0))
    assert result.stdout.strip() == str(cores[len(cores) // 2 :] if back_cores_only else cores)


# 낮춘 프로세스 아래의 자식이, 노트북 커널처럼 새 세션을 여는 손자를 띄웁니다. 손자는 스레드를 하나
# 더 둡니다.
GRANDCHILD = "import threading, time; threading.Thread(target=time.sleep, args=(60,)).start()"
CHILD_OF_PINNED = f"""
import subprocess, sys
subprocess.run([sys.executable, "-c", {GRANDCHILD!r}], start_new_session=True)
"""
PINNED_FAMILY = f"""
import subprocess, sys
from tests import background
background.lower_priority(back_cores_only=True)
subprocess.run([sys.executable, "-c", {CHILD_OF_PINNED!r}])
"""


def family_of(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def task_affinities(family: list[psutil.Process]) -> list[set[int]]:
    return [os.sched_getaffinity(thread.id) for member in family for thread in member.threads()]


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="코어 지정은 Linux에서, 코어가 2개 이상일 때만 확인합니다",
)
def test_release_all_puts_every_thread_of_the_family_back_on_every_core(monkeypatch):
    every_core = os.sched_getaffinity(0)
    process = subprocess.Popen([sys.executable, "-c", PINNED_FAMILY], cwd=ROOT)
    monkeypatch.setattr(background, "STARTED", [process])
    try:
        deadline = time.monotonic() + 30
        # 부모와 자식의 스레드 하나씩, 손자의 스레드 둘이 모두 뜰 때까지 기다립니다.
        while len(task_affinities(family_of(process.pid))) < 4:
            assert time.monotonic() < deadline, "손자 프로세스가 30초 안에 뜨지 않았습니다"
            time.sleep(0.1)
        family = family_of(process.pid)
        assert every_core not in task_affinities(family)  # 처음에는 모두 뒤쪽 코어에 묶여 있습니다
        background.release_all()
        assert task_affinities(family) == [every_core] * len(task_affinities(family))
    finally:
        for member in family_of(process.pid)[::-1]:
            member.kill()
        process.wait()


def test_release_all_leaves_finished_work_alone(monkeypatch):
    # 끝난 일의 프로세스 번호는 운영체제가 다른 프로세스에 다시 줄 수 있어, 찾아보지도 않습니다.
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    monkeypatch.setattr(background, "STARTED", [finished])

    def looked_up(pid):
        raise AssertionError(f"끝난 일의 번호 {pid}를 찾아보았습니다")

    monkeypatch.setattr(background.psutil, "Process", looked_up)
    background.release_all()


def test_waiting_for_background_work_releases_it_first(monkeypatch, tmp_path):
    # 세션이 결과를 기다리기 시작하면 그때부터는 앞쪽 코어가 놀므로, 기다리기 전에 풉니다.
    released = []
    monkeypatch.setattr(background, "release_all", lambda: released.append(True))
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    log = tmp_path / "job.log"
    log.write_text("", encoding="utf-8")
    background.wait(finished, log, None, "시험 프로세스가")
    assert released == [True]


def test_every_core_tests_come_late_and_tests_that_wait_for_background_work_last(request):
    """결과를 기다리는 테스트(노트북, 브라우저 검사)가 앞에 오면 세션이 거기서 그 일을 통째로
    기다립니다. 맨 뒤에 와야 다른 테스트와 겹칩니다. 두 코어를 다 쓰는 파일(USES_EVERY_CORE)은
    배경 일이 대개 끝난 그 앞에 둡니다(tests/conftest.py)."""
    assert all((ROOT / "tests" / name).is_file() for name in USES_EVERY_CORE)  # 이름이 낡지 않게
    order = [session_order(item) for item in request.session.items]
    assert order == sorted(order)


def test_browser_findings_survive_the_trip_between_processes():
    found = site_scan.BrowserFindings(
        axe_version="4.10.0",
        violations={("index.html", "phone", "slate"): [{"id": "color-contrast"}]},
        chart_text_px={("index.html", "desktop"): 12.5, ("404.html", "phone"): None},
        file_url_problems=["요청 실패: x"],
        keyboard_scroll={"index.html": [{"label": "표", "focused": True, "left": 40}]},
        first_visits={("index.html", "phone"): {"overflow_px": 0}},
    )
    assert site_scan.from_json(site_scan.to_json(found)) == found
