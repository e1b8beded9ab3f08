"""측정한 환경을 기록합니다: 장치, 드라이버, 버전, CPU, 스레드 설정, TF32 설정, 날짜, 커밋."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import torch

from benchmarks import results_file


def _run(command: list[str], cwd: Path | None = None) -> str | None:
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


# 팁 6(bf16)과 행렬 곱 천장을 CPU에서 좌우하는 명령어 집합 확장입니다.
ISA_FLAGS = (
    "avx2",
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "amx_bf16",
    "amx_tile",
    "asimd",
    "sve",
)


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    """CPU 이름. 가상 머신이 "AMD EPYC"처럼 세대를 숨기면 family와 model 번호를 덧붙입니다."""
    info = _cpuinfo()
    match = re.search(r"^model name\s*:\s*(.+)$", info, re.MULTILINE)
    name = (match.group(1) if match else platform.processor() or platform.machine()).strip()
    family = re.search(r"^cpu family\s*:\s*(\d+)$", info, re.MULTILINE)
    model = re.search(r"^model\s*:\s*(\d+)$", info, re.MULTILINE)
    if family and model and not re.search(r"\d", name):
        name += f" (family {family.group(1)}, model {model.group(1)})"
    return name


def cpu_flags() -> list[str]:
    """bf16·행렬 곱 속도를 정하는 CPU 기능 가운데 이 CPU에 있는 것(예: avx512_bf16, amx_bf16)."""
    match = re.search(r"^(?:flags|Features)\s*:\s*(.+)$", _cpuinfo(), re.MULTILINE)
    present = set(match.group(1).split()) if match else set()
    return [flag for flag in ISA_FLAGS if flag in present]


def usable_cores() -> int:
    # 컨테이너나 taskset으로 제한되면 os.cpu_count()보다 적습니다.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """측정한 커밋과, 커밋되지 않은 변경이 있었는지.

    .git 없이 작업 트리만 복사해 간 곳(예: 빌려 쓰는 GPU 장비)에서는 git이 답하지 못하므로,
    환경 변수 SOURCE_COMMIT으로 커밋을 알려 줄 수 있습니다. 그때 변경 여부는 알 수 없음(None)입니다.
    """
    commit = _run(["git", "rev-parse", "HEAD"], cwd=root)
    if commit is None:
        given = os.environ.get("SOURCE_COMMIT", "").strip().lower()
        return (given if re.fullmatch(r"[0-9a-f]{40}", given) else None), None
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root)
    return commit, bool(status)


def device_description(device: torch.device) -> tuple[str, str | None]:
    """장치 이름과 NVIDIA 드라이버 버전(있으면)."""
    if device.type != "cuda":
        return cpu_model(), None
    query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
    driver = _run(query)
    return torch.cuda.get_device_name(device), driver.splitlines()[0] if driver else None


def describe(device: torch.device, root: Path) -> dict:
    name, driver = device_description(device)
    commit, dirty = git_state(root)
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "device_kind": device.type,
        "device_name": name,
        "device_count": torch.cuda.device_count() if device.type == "cuda" else 0,
        "driver": driver,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(cudnn) if cudnn else None,
        "lightning": _version("lightning"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cpu_cores": os.cpu_count() or 1,
        "usable_cores": usable_cores(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        # torch 2.13: fp32_precision과 예전 allow_tf32를 섞어 읽으면 오류가 나므로 새 API만 씁니다.
        "tf32_matmul": torch.backends.cuda.matmul.fp32_precision == "tf32",
        "tf32_cudnn": torch.backends.cudnn.conv.fp32_precision == "tf32",
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit,
        "dirty": dirty,
        "pytest_benchmark": _version("pytest-benchmark") or "unknown",
    }


def results_name(env: dict) -> str:
    """결과 파일 이름(확장자 없이). 규칙은 results_file에 있고, 읽을 때도 같은 규칙을 씁니다."""
    return results_file.results_name(env)
