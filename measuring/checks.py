"""측정을 시작하기 전에 확인하는 것: GPU와 공유 메모리, 결과 폴더에 쓸 수 있는지.

문제가 있으면 무엇을 고치면 되는지 한국어 문장 하나를 돌려주고, 없으면 None입니다.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import torch

from measuring.session import LOCAL_RESULTS

# 팁 1은 GPU 컴퓨터에서 워커를 수십 개 띄웁니다. 워커가 배치를 넘기는 공유 메모리가 모자라면
# 측정 도중 "Bus error"로 죽습니다(Docker의 기본값은 64 MB).
MIN_SHM_BYTES = 1 << 30


def gpu_problem() -> str | None:
    if not torch.cuda.is_available():
        return (
            "--gpu: CUDA GPU를 찾지 못했습니다(torch.cuda.is_available()가 False, "
            f"torch {torch.__version__}, CUDA 빌드 {torch.version.cuda}). "
            "GPU 측정은 GPU가 있는 컴퓨터에서 실행하세요. 흐름만 확인하려면 --dry-run을 더하세요."
        )
    try:
        free = shutil.disk_usage("/dev/shm").free
    except OSError:
        return None  # /dev/shm이 없는 운영체제(macOS, Windows)는 다른 방식으로 넘깁니다.
    if free >= MIN_SHM_BYTES:
        return None
    return (
        f"--gpu: /dev/shm의 여유 공간이 {free / 2**20:.0f} MiB뿐입니다. DataLoader 워커가 배치를 "
        "넘기는 공유 메모리라서, 팁 1의 많은 워커가 측정 도중 죽습니다. 1 GiB 이상으로 늘리세요"
        "(Docker라면 `--shm-size=2g`)."
    )


def writable_problem(folder: Path) -> str | None:
    """결과 폴더에 정말 쓸 수 있는지 파일을 하나 만들어 봅니다(root는 권한 비트를 무시합니다)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-", suffix=".tmp"):
            pass
    except OSError as error:
        reason = error.strerror or error
        return f"{folder}에 쓸 수 없습니다({reason}). 결과는 {LOCAL_RESULTS}에 씁니다."
    return None
