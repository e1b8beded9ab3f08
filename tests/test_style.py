"""저장소의 모든 Python 파일이 ruff 검사와 서식 규칙을 지키는지 확인합니다."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=" ".join)
def test_ruff(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


MAX_MODULE_LINES = 250  # 한 모듈은 한 가지 일만 합니다(CONTRIBUTING.md의 "모듈 하나에 일 하나")


def long_modules(folder: Path) -> dict[str, int]:
    lengths = {path.name: len(path.read_text("utf-8").splitlines()) for path in folder.glob("*.py")}
    return {name: count for name, count in lengths.items() if count > MAX_MODULE_LINES}


@pytest.mark.parametrize("folder", ["benchmarks", "hooks"])
def test_no_module_of_the_plumbing_is_longer_than_250_lines(folder):
    assert long_modules(ROOT / folder) == {}


def test_long_module_check_can_fail(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_modules(tmp_path) == {"long.py": MAX_MODULE_LINES + 1}
