"""측정의 출처: 어느 장치(파일 하나)에서, 어느 코드(페이지마다 스니펫과 벤치마크의 SHA-256)와
어느 버전·설정·커밋으로 쟀는지 기록하고, 측정한 뒤 코드가 바뀌었는지 찾습니다.

장치 부분(device)은 파일 전체에 하나입니다: 같은 파일의 페이지는 모두 같은 장치 모델, 개수,
torch 버전에서 잰 것입니다. 나머지(날짜, 커밋, 라이브러리 버전, 스레드, TF32 설정)는 페이지마다
따로 기록해, 페이지 하나만 다시 재어 올릴 수 있습니다.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from guide import registry

if TYPE_CHECKING:
    import torch


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


def power_limit_w(device: torch.device) -> float | None:
    """GPU의 전력 한도(W). 이름이 같은 H200 SXM(700 W)과 H200 NVL(600 W 이하)을 가릅니다."""
    if device.type != "cuda":
        return None
    import torch  # 사이트 빌드는 코드 지문만 쓰므로 torch(약 1.5초)는 쓰는 함수에서 읽습니다

    index = device.index if device.index is not None else torch.cuda.current_device()
    query = [
        "nvidia-smi",
        f"--id={index}",
        "--query-gpu=power.limit",
        "--format=csv,noheader,nounits",
    ]
    answer = _run(query)
    try:
        return round(float(answer.splitlines()[0]), 1) if answer else None
    except ValueError:
        return None


def describe_device(device: torch.device) -> dict:
    """파일 하나에 하나인 장치 부분: 페이지를 합칠 때 이 값이 모두 같아야 합니다."""
    import torch

    cuda = device.type == "cuda"
    return {
        "kind": device.type,
        "name": torch.cuda.get_device_name(device) if cuda else cpu_model(),
        "count": torch.cuda.device_count() if cuda else 0,
        "power_limit_w": power_limit_w(device),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cpu_cores": os.cpu_count() or 1,
        "usable_cores": usable_cores(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


def _driver(device: torch.device) -> str | None:
    if device.type != "cuda":
        return None
    answer = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return answer.splitlines()[0] if answer else None


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def code_hashes(page: registry.Page) -> dict:
    """측정한 코드의 지문: 레지스트리가 정한 스니펫과 벤치마크 모듈 각각의 SHA-256."""
    return {
        "snippet_sha256": sha256(page.snippet_path),
        "benchmark_sha256": sha256(page.benchmark_path),
    }


def describe_code(page: registry.Page, root: Path) -> dict:
    commit, dirty = git_state(root)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit,
        "dirty": dirty,
        **code_hashes(page),
    }


def describe_measured(device: torch.device, page: registry.Page, root: Path, seed: int) -> dict:
    """페이지 하나를 잰 조건: 코드, 날짜, 커밋, 라이브러리 버전, 스레드, TF32 설정."""
    import torch

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        **describe_code(page, root),
        "driver": _driver(device),
        "cudnn": str(cudnn) if cudnn else None,
        "lightning": _version("lightning"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        # OpenMP 스레드가 기다리며 도는 횟수(루트 conftest.py가 정함): 코어를 나눠 쓸 때의 흔들림.
        "gomp_spincount": os.environ.get("GOMP_SPINCOUNT"),
        # torch 2.13: 새 API(fp32_precision)로 읽습니다. 새 API로 켠 뒤의 예전 getter는 오류입니다.
        "tf32_matmul": torch.backends.cuda.matmul.fp32_precision == "tf32",
        "tf32_cudnn": torch.backends.cudnn.conv.fp32_precision == "tf32",
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "pytest_benchmark": _version("pytest-benchmark") or "unknown",
        "seed": seed,
    }


def changed_sources(measured: dict, page: registry.Page) -> dict[str, str]:
    """측정한 뒤 바뀐(또는 사라진) 코드: {경로: "바뀜"|"없음"}. 경로는 레지스트리에서 옵니다."""
    changes = {}
    for path, field in (
        (page.snippet_path, "snippet_sha256"),
        (page.benchmark_path, "benchmark_sha256"),
    ):
        name = path.relative_to(registry.ROOT).as_posix()
        if not path.is_file():
            changes[name] = "없음"
        elif sha256(path) != measured[field]:
            changes[name] = "바뀜"
    return changes


def stale_pages(doc: dict) -> dict[str, dict[str, str]]:
    """페이지마다 측정한 뒤 바뀐 코드(바뀐 것이 없는 페이지는 빠집니다)."""
    stale = {}
    for page_id, section in doc["pages"].items():
        changes = changed_sources(section["measured"], registry.by_id(page_id))
        if changes:
            stale[page_id] = changes
    return stale
