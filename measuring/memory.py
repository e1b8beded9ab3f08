"""호출 한 번이 더 쓰는 최대 메모리(MiB). 시간 재기와 따로, 워밍업 뒤에 한 번 잽니다.

- CUDA: PyTorch 할당기의 최고점(`max_memory_allocated`)에서 호출 전에 이미 잡혀 있던 양을 뺀 값.
- CPU(Linux, glibc): 커널이 기록하는 프로세스 상주 메모리의 최고점(VmHWM)을 호출 직전에 되돌리고
  (/proc/self/clear_refs에 5), 호출 뒤의 최고점에서 호출 전 상주 메모리를 뺀 값. 이때만 glibc가
  큰 블록을 mmap으로 받아 해제하는 즉시 돌려주게 해서(M_MMAP_THRESHOLD) 앞 호출이 남긴 힙이
  섞이지 않습니다. 재고 나면 glibc가 평소 도달하는 값(32 MiB)으로 되돌려 시간에는 영향을 주지
  않습니다. 그 밖의 운영체제에서는 None(잴 수 없음)입니다.
근거와 한계는 docs/method.md의 "메모리" 절에 있습니다.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import re
from collections.abc import Callable
from pathlib import Path

import torch

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
# glibc mallopt의 매개변수 번호(malloc.h): M_TRIM_THRESHOLD = -1, M_MMAP_THRESHOLD = -3.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# 재는 동안: 128 KiB보다 큰 블록은 mmap으로 받고 해제하면 바로 돌려줍니다.
MEASURING = {M_MMAP_THRESHOLD: 128 << 10, M_TRIM_THRESHOLD: 128 << 10}
# 평소: glibc의 동적 조정이 64비트에서 도달하는 상한(mmap 32 MiB, trim 64 MiB)에 고정합니다.
STEADY = {M_MMAP_THRESHOLD: 32 << 20, M_TRIM_THRESHOLD: 64 << 20}


@functools.cache
def _libc():
    name = ctypes.util.find_library("c")
    if not name or not STATUS.exists() or not CLEAR_REFS.exists():
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt  # noqa: B018  (glibc가 아니면 여기서 AttributeError)
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def _status_bytes(key: str) -> int:
    match = re.search(rf"^{key}:\s+(\d+) kB", STATUS.read_text(), re.MULTILINE)
    return int(match[1]) * 1024 if match else 0


def _mallopt(settings: dict[int, int]) -> None:
    libc = _libc()
    for parameter, value in settings.items():
        libc.mallopt(parameter, value)


def cpu_peak_mib(fn: Callable[[], object]) -> float | None:
    libc = _libc()
    if libc is None:
        return None
    _mallopt(MEASURING)
    try:
        gc.collect()
        libc.malloc_trim(0)
        CLEAR_REFS.write_text("5")  # VmHWM을 지금의 상주 메모리로 되돌립니다.
        before = _status_bytes("VmRSS")
        fn()
        peak = _status_bytes("VmHWM")
    except OSError:
        return None
    finally:
        _mallopt(STEADY)
    return max(0.0, (peak - before) / 2**20)


def cuda_peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    gc.collect()
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    fn()
    torch.cuda.synchronize(device)
    return max(0.0, (torch.cuda.max_memory_allocated(device) - before) / 2**20)


def peak_mib(fn: Callable[[], object], device: torch.device) -> float | None:
    """fn()을 한 번 부르는 동안 더 쓴 최대 메모리. 잴 수 없으면 None."""
    if device.type == "cuda":
        return cuda_peak_mib(fn, device)
    return cpu_peak_mib(fn)


def settle() -> None:
    """측정 세션을 시작할 때 glibc의 임계값을 평소 값으로 고정해, 메모리를 잰 앞뒤로 시간 조건이
    달라지지 않게 합니다."""
    if _libc() is not None:
        _mallopt(STEADY)
