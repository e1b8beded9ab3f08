"""내려받은 노트북을 읽는 사람처럼 실행합니다: 노트북이 import하는 꾸러미가 하나도 없는 새 가상
환경에서, nbmake(노트북을 실행하는 pytest 플러그인)로 첫 셀의 `%pip install`부터 끝까지.

새 환경에는 노트북을 실행하는 도구(tests/notebook-runner.txt)만 설치합니다. torch 같은 꾸러미는
노트북의 첫 셀이 설치합니다. 같은 환경에 두 pip이 동시에 쓰지 않도록, 아직 없는 꾸러미를 설치하는
노트북은 하나씩 먼저 실행하고, 나머지는 CPU 수만큼 나눠 동시에 실행합니다.

몇 분 걸리는 일이라 테스트 세션은 이것을 맨 처음 다른 프로세스로, 남는 CPU로만 띄우고(start,
tests/background.py), 다른 테스트가 도는 동안 기다렸다가 노트북 테스트에서 결과를 받습니다
(finish, tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests import background
from tests.site_build import ROOT

RUNNER = ROOT / "tests" / "notebook-runner.txt"
TIMEOUT_S = 900  # 노트북 하나의 상한(nbmake 기본값은 300초). 2코어에서 가장 긴 것이 1분 남짓입니다.
INSTALL = re.compile(r"^%pip install --quiet (?P<packages>.+)$", re.M)


def fresh_environment(folder: Path) -> Path:
    """노트북을 실행하는 도구만 있는 새 가상 환경을 만들고 그 python 경로를 돌려줍니다."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", "-r", str(RUNNER)]
    result = subprocess.run(install, capture_output=True, text=True)
    assert result.returncode == 0, f"nbmake를 설치하지 못했습니다: {result.stderr[-2000:]}"
    return python


def importable(python: Path, module: str) -> bool:
    probe = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def installs(notebook: Path) -> set[str]:
    """노트북의 첫 코드 셀이 설치하는 꾸러미(`이름==버전`)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    first = next(cell["source"] for cell in cells if cell["cell_type"] == "code")
    found = INSTALL.search(first)
    return set(found["packages"].split()) if found else set()


def install_first(notebooks: list[Path]) -> tuple[list[Path], list[Path]]:
    """아직 설치되지 않은 꾸러미를 설치하는 노트북(하나씩 실행)과 나머지(동시에 실행)로 나눕니다."""
    covered: set[str] = set()
    alone, together = [], []
    for notebook in sorted(notebooks, key=lambda n: -len(installs(n))):
        if installs(notebook) - covered:
            alone.append(notebook)
            covered |= installs(notebook)
        else:
            together.append(notebook)
    return alone, together


def nbmake(python: Path, notebooks: list[Path], folder: Path, threads: int = 0) -> subprocess.Popen:
    """notebooks를 folder에 복사해 nbmake로 실행합니다. 출력은 그 복사본에 쓰고(--overwrite),
    pytest의 기록은 folder/nbmake.log에 씁니다(파이프가 차서 다른 프로세스가 멈추지 않게).
    threads가 0이 아니면 커널의 torch 스레드 수(OMP_NUM_THREADS)를 그만큼으로 묶습니다."""
    folder.mkdir(parents=True, exist_ok=True)
    for notebook in notebooks:
        shutil.copy(notebook, folder / notebook.name)
    command = [
        str(python), "-m", "pytest", "--nbmake", "--overwrite",
        f"--nbmake-timeout={TIMEOUT_S}", "-p", "no:cacheprovider", "-q", "-rA", "--durations=0",
        *(notebook.name for notebook in notebooks),
    ]  # fmt: skip
    # 저장소의 가상 환경이나 설정이 새 환경으로 새어 들지 않게 합니다.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    with open(folder / "nbmake.log", "w", encoding="utf-8") as log:
        return subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


def finished_log(process: subprocess.Popen, folder: Path) -> str:
    process.wait()
    return (folder / "nbmake.log").read_text(encoding="utf-8", errors="replace")


def run_notebooks(notebooks: list[Path], workdir: Path, workers: int) -> dict[str, dict]:
    """노트북을 모두 한 새 환경에서 실행하고 이름 → 실행한 노트북(JSON)과 nbmake 기록을 줍니다."""
    python = fresh_environment(workdir / "env")
    preinstalled = [name for name in ("torch", "numpy", "lightning") if importable(python, name)]
    assert preinstalled == [], f"새 환경에 노트북이 설치할 꾸러미가 이미 있습니다: {preinstalled}"
    alone, together = install_first(notebooks)
    folders: dict[Path, Path] = {}  # 노트북 → 실행한 복사본이 있는 폴더
    logs: dict[Path, str] = {}
    for notebook in alone:
        folder = folders[notebook] = workdir / notebook.stem
        logs[notebook] = finished_log(nbmake(python, [notebook], folder), folder)
    # 파일이 큰 것(오래 걸리는 것)부터 번갈아 나눠, 한 프로세스만 늦게 끝나지 않게 합니다.
    ordered = sorted(together, key=lambda n: -n.stat().st_size)
    shares = {workdir / f"worker-{i}": ordered[i::workers] for i in range(workers)}
    # 동시에 도는 커널이 코어를 나눠 씁니다. 코어보다 스레드가 많으면 OpenMP 스레드가 서로를
    # 기다리느라 느려집니다(2코어에서 함께 도는 노트북 18개가 141초 → 123초).
    threads = max(1, (os.cpu_count() or 1) // workers)
    running = {
        folder: nbmake(python, share, folder, threads) for folder, share in shares.items() if share
    }
    for folder, process in running.items():
        log = finished_log(process, folder)
        for notebook in shares[folder]:
            folders[notebook], logs[notebook] = folder, log
    return {
        notebook.stem: {
            "notebook": json.loads((folders[notebook] / notebook.name).read_text("utf-8")),
            "log": logs[notebook],
        }
        for notebook in notebooks
    }


def start(notebooks: list[Path], workdir: Path, workers: int) -> subprocess.Popen:
    """run_notebooks를 다른 프로세스에서 시작합니다. 결과는 workdir/runs.json에 씁니다."""
    workdir.mkdir(parents=True, exist_ok=True)
    args = [str(workdir), str(workers), *map(str, notebooks)]
    return background.start("tests.notebook_run", args, workdir / "run.log")


def finish(process: subprocess.Popen, workdir: Path) -> dict[str, dict]:
    """start로 띄운 실행이 끝나기를 기다려 run_notebooks의 결과를 돌려줍니다."""
    # 노트북마다 nbmake의 상한(TIMEOUT_S)이 있으므로 전체에는 따로 두지 않습니다.
    background.wait(process, workdir / "run.log", None, "노트북 실행이")
    return json.loads((workdir / "runs.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    # 다른 테스트가 CPU를 원하면 먼저 쓰게 하고, 이 실행은 남는 CPU로만 돕니다(nbmake와 커널도
    # 물려받습니다).
    # 브라우저 검사와 달리 뒤쪽 코어에 묶지 않습니다. 묶으면 두 배경 일이 한 코어를 나눠 써서
    # 세션이 끝에서 기다렸습니다(CONTRIBUTING.md).
    background.lower_priority(back_cores_only=False)
    folder, worker_count, *paths = sys.argv[1:]
    runs = run_notebooks([Path(path) for path in paths], Path(folder), int(worker_count))
    (Path(folder) / "runs.json").write_text(json.dumps(runs), encoding="utf-8")
