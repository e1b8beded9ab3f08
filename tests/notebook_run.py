"""내려받은 노트북을 읽는 사람처럼 실행합니다: 노트북이 import하는 꾸러미가 하나도 없는 새 가상
환경에서, nbmake(노트북을 실행하는 pytest 플러그인)와 pytest-xdist로 첫 셀부터 끝까지.

새 환경에는 노트북을 실행하는 도구(tests/notebook-runner.txt)를 설치한 다음, 노트북들의 첫 셀이
설치하는 꾸러미(`%pip install --quiet 이름==버전 …`)를 모두 한 번에 설치합니다. 그래서 작업자 둘이
동시에 같은 환경에 pip로 쓰지 않고, 첫 셀은 이미 설치된 것을 확인만 합니다. 첫 셀들이 적지 않은
꾸러미는 새 환경에 없으므로, 그런 노트북은 import에서 실패합니다.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.site_build import ROOT

RUNNER = ROOT / "tests" / "notebook-runner.txt"
TIMEOUT_S = 900  # 노트북 하나의 상한(nbmake 기본값은 300초). 2코어에서 가장 긴 것이 1분 남짓입니다.
INSTALL = re.compile(r"^%pip install --quiet (?P<packages>.+)$", re.M)


def fresh_environment(folder: Path) -> Path:
    """노트북을 실행하는 도구만 있는 새 가상 환경을 만들고 그 python 경로를 돌려줍니다."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    pip_install(python, "-r", str(RUNNER))
    return python


def pip_install(python: Path, *args: str) -> None:
    command = [str(python), "-m", "pip", "install", "--quiet", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=clean_env())
    assert result.returncode == 0, f"{' '.join(args)} 설치 실패: {result.stderr[-2000:]}"


def clean_env() -> dict[str, str]:
    # 저장소의 가상 환경이나 설정이 새 환경으로 새어 들지 않게 합니다.
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}


def importable(python: Path, module: str) -> bool:
    probe = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def installs(notebook: Path) -> set[str]:
    """노트북의 첫 코드 셀이 설치하는 꾸러미(`이름==버전`)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    first = next(cell["source"] for cell in cells if cell["cell_type"] == "code")
    found = INSTALL.search("".join(first))
    return set(found["packages"].split()) if found else set()


def run_notebooks(notebooks: list[Path], workdir: Path, workers: int) -> dict[str, dict]:
    """노트북을 모두 한 새 환경에서 실행하고 이름 → 실행한 노트북(JSON)과 nbmake 기록을 줍니다."""
    python = fresh_environment(workdir / "env")
    preinstalled = [name for name in ("torch", "numpy", "lightning") if importable(python, name)]
    assert preinstalled == [], f"새 환경에 노트북이 설치할 꾸러미가 이미 있습니다: {preinstalled}"
    pip_install(python, *sorted(set().union(*map(installs, notebooks))))
    folder = workdir / "run"
    folder.mkdir(parents=True, exist_ok=True)
    for notebook in notebooks:
        shutil.copy(notebook, folder / notebook.name)
    command = [
        str(python), "-m", "pytest", "--nbmake", "--overwrite", f"--nbmake-timeout={TIMEOUT_S}",
        "-n", str(workers), "-p", "no:cacheprovider", "-q", "-rA", "--durations=0",
        *(notebook.name for notebook in notebooks),
    ]  # fmt: skip
    # 동시에 도는 커널이 코어를 나눠 씁니다. 코어보다 스레드가 많으면 OpenMP 스레드가 서로를
    # 기다리느라 느려집니다.
    env = clean_env() | {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // workers))}
    log = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    return {
        notebook.stem: {
            "notebook": json.loads((folder / notebook.name).read_text("utf-8")),
            "log": log.stdout + log.stderr,
        }
        for notebook in notebooks
    }
