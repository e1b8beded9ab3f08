"""CUDA 경로: 이벤트로 잰 스텝·데이터 시간, 동기화 경고의 호출 위치, 고정되지 않은 호스트→장치
복사, GPU가 쉰 몫과 커널 크기 분포.

아직 GPU에서 돌려 보지 않았습니다(catalog.NOT_RUN_ON_GPU). 계산은 모두 순수 함수로 두어 CPU에서
기록하거나 합성한 이벤트를 넣어 돌려 봅니다(tests/test_doctor_gpu.py). torch.cuda를 부르는 곳은
Cuda(진단기가 쓰는 이음매)와 그것이 만드는 StepProfiler뿐입니다. 시험은 Cuda와 같은 이름을 가진
가짜를 Doctor(cuda=...)에 넘겨 CPU에서 진단기의 CUDA 경로 전체를 돌립니다.
tools/gpu_check.sh가 GPU에서 모든 경로를 한 번에 돌립니다.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass

from torchdoctor import where
from torchdoctor.catalog import NOT_RUN_ON_GPU

PAGEABLE_HTOD = "Memcpy HtoD (Pageable -> Device)"
SHORT_KERNEL_S = 20e-6  # launch-bound 규칙의 "짧은 커널" 문턱(catalog의 문장과 같습니다)
SYNC_WORDS = ("synchroniz",)  # set_sync_debug_mode("warn")의 경고 문장에 들어 있는 말
SYNC_FILTER = ".*synchroniz"  # 같은 말을 경고 필터의 정규식으로(문장 어디에 있어도)

UNVERIFIED = NOT_RUN_ON_GPU


class Cuda:
    """진단기가 CUDA에서 부르는 것: 이벤트, 동기화, 동기화 경고, 프로파일러 한 스텝, 호스트 시계.

    CPU에서는 진단기가 이 가운데 아무것도 부르지 않습니다."""

    clock = staticmethod(time.perf_counter)

    def event(self):
        import torch

        return torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def sync_warnings(self):
        return sync_warnings_caught()

    def profiler(self) -> StepProfiler:
        return StepProfiler(self.synchronize)


# ----- 이벤트로 잰 스텝과 데이터 시간 -----
def event_seconds(pairs) -> list[float]:
    """(시작, 끝) 이벤트 쌍마다 걸린 초. 이벤트는 elapsed_time(다른 이벤트) → 밀리초를 줍니다."""
    return [start.elapsed_time(end) / 1000 for start, end in pairs]


def step_and_data_s(boundaries, fetches) -> tuple[list[float], list[float]]:
    """스텝 경계 이벤트(스텝 수 + 1개)와 스텝마다의 (배치 기다림 시작, 끝) 쌍 목록들로
    스텝 시간과 스텝마다 데이터를 기다린 시간을 냅니다(GPU 시계)."""
    step_s = event_seconds(zip(boundaries, boundaries[1:], strict=False))
    data_s = [sum(event_seconds(pairs)) for pairs in fetches[: len(step_s)]]
    return step_s, data_s


class StepEvents:
    """스텝 경계와 배치 기다림에 CUDA 이벤트를 찍습니다(읽기는 창이 끝난 뒤 한 번 동기화)."""

    def __init__(self, event_factory=None):
        if event_factory is None:
            import torch

            def event_factory():
                return torch.cuda.Event(enable_timing=True)

        self.make = event_factory
        self.boundaries: list = []
        self.fetches: list[list] = []

    def boundary(self) -> None:
        event = self.make()
        event.record()
        self.boundaries.append(event)
        self.fetches.append([])

    def fetch(self):
        """배치를 기다리는 동안을 감싸는 컨텍스트: `with events.fetch(): batch = next(it)`."""
        start, end = self.make(), self.make()

        @contextlib.contextmanager
        def around():
            start.record()
            try:
                yield
            finally:
                end.record()
                if self.fetches:
                    self.fetches[-1].append((start, end))

        return around()

    def read(self, synchronize=None) -> tuple[list[float], list[float]]:
        if synchronize is None:
            import torch

            synchronize = torch.cuda.synchronize
        synchronize()
        return step_and_data_s(self.boundaries, self.fetches)


# ----- set_sync_debug_mode("warn")로 센 동기화 -----
@dataclass
class SyncRecord:
    """동기화 경고 하나: 경고 문장, 부른 줄, 그 호출에서 보낸 호스트 시간(잰 때만, 초)."""

    message: str
    filename: str
    lineno: int
    seconds: float | None = None


def is_sync_warning(message: str) -> bool:
    return any(word in message.lower() for word in SYNC_WORDS)


def sync_sites(records, steps: int) -> list[dict]:
    """잡은 경고(message, filename, lineno, 있으면 seconds)를 독자의 파일의 줄마다 세어 스텝당
    횟수로 냅니다. 파일 이름은 호출 탐침의 줄과 맞대도록 그대로 둡니다(보고서가 줄여 씁니다)."""
    counts: Counter = Counter()
    seconds: dict = {}
    for record in records:
        if not is_sync_warning(str(record.message)):
            continue
        if not where.is_reader_file(record.filename):
            continue
        key = (record.filename, record.lineno)
        counts[key] += 1
        spent = getattr(record, "seconds", None)
        if spent is not None:
            seconds[key] = seconds.get(key, 0.0) + spent
    per = max(steps, 1)
    return [
        {
            "file": file,
            "line": line,
            "count": count,
            "per_step": count / per,
            "seconds_per_step": seconds[(file, line)] / per if (file, line) in seconds else None,
        }
        for (file, line), count in counts.most_common()
    ]


@contextlib.contextmanager
def sync_warnings_caught(get_mode=None, set_mode=None):
    """동기화 경고를 켜고 그 경고만 잡습니다(잡은 SyncRecord 목록을 내줍니다).

    작업의 다른 경고는 평소처럼 나갑니다. 끝나면 전의 모드와 경고 설정으로 되돌립니다.
    get_mode와 set_mode는 torch.cuda의 것이 기본이고, 시험은 가짜를 넘깁니다."""
    if get_mode is None or set_mode is None:
        import torch

        get_mode, set_mode = torch.cuda.get_sync_debug_mode, torch.cuda.set_sync_debug_mode
    before = get_mode()
    caught: list[SyncRecord] = []
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if is_sync_warning(str(message)):
            caught.append(SyncRecord(str(message), filename, lineno))
        else:
            shown(message, category, filename, lineno, file, line)

    # 같은 줄의 경고가 스텝마다 다시 나오도록 동기화 경고만 "always"로 둡니다
    warnings.filterwarnings("always", message=SYNC_FILTER)
    rule = warnings.filters[0]
    warnings.showwarning = show
    try:
        set_mode("warn")
        yield caught
    finally:
        set_mode(before)
        if warnings.showwarning is show:
            warnings.showwarning = shown
        _remove_filter(rule)


def _remove_filter(rule) -> None:
    for index, item in enumerate(warnings.filters):
        if item is rule:
            del warnings.filters[index]
            mutated = getattr(warnings, "_filters_mutated", None)
            if mutated is not None:
                mutated()  # 경고 레지스트리가 필터가 바뀐 것을 알게 합니다
            return


# ----- 프로파일러 한 스텝: 고정되지 않은 복사, GPU가 쉰 몫, 커널 크기 -----
def pageable_copies(events) -> dict:
    """프로파일러 이벤트(name, start_s, end_s) 중 고정되지 않은 호스트 메모리에서 온 복사."""
    copies = [end - start for name, start, end in events if name == PAGEABLE_HTOD]
    return {"count": len(copies), "seconds": sum(copies)}


def busy_seconds(intervals) -> float:
    """겹치는 구간을 합친 길이(GPU가 무엇이든 하고 있던 시간)."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def idle_share(kernels, step_start: float, step_end: float) -> float | None:
    """스텝 [step_start, step_end] 중 GPU에서 아무 커널도 돌지 않은 몫(0–1)."""
    span = step_end - step_start
    if span <= 0:
        return None
    clipped = [(max(s, step_start), min(e, step_end)) for s, e in kernels if e > step_start]
    clipped = [(s, e) for s, e in clipped if e > s]
    return round(max(0.0, 1.0 - busy_seconds(clipped) / span), 4)


def kernel_sizes(kernels) -> dict:
    """커널 길이의 분포: 개수, 중앙값, 90번째 백분위, 짧은 커널(20 µs 미만)의 몫."""
    durations = sorted(end - start for start, end in kernels)
    if not durations:
        return {"count": 0, "median_s": None, "p90_s": None, "short_share": None}
    p90 = durations[min(len(durations) - 1, int(0.9 * len(durations)))]
    short = sum(1 for d in durations if d < SHORT_KERNEL_S)
    return {
        "count": len(durations),
        "median_s": statistics.median(durations),
        "p90_s": p90,
        "short_share": round(short / len(durations), 4),
    }


def profile_summary(events, step_start: float, step_end: float) -> dict:
    """프로파일러 한 스텝의 이벤트(name, kind, start_s, end_s)를 규칙이 쓰는 증거로 줄입니다.

    kind는 "kernel", "memcpy", "other"입니다. 복사도 GPU가 일한 시간에 넣습니다."""
    kernels = [(s, e) for _, kind, s, e in events if kind == "kernel"]
    device_work = [(s, e) for _, kind, s, e in events if kind in ("kernel", "memcpy")]
    return {
        "pageable_htod": pageable_copies([(n, s, e) for n, _, s, e in events]),
        "idle_share": idle_share(device_work, step_start, step_end),
        "kernels": kernel_sizes(kernels),
        "unverified": UNVERIFIED,
    }


def kind_of(name: str, device_type: str) -> str:
    if name.startswith("Memcpy") or name.startswith("Memset"):
        return "memcpy"
    return "kernel" if device_type == "CUDA" else "other"


def profiler_events(profile) -> list[tuple]:
    """torch.profiler.profile의 이벤트를 (name, kind, start_s, end_s)로(마이크로초 → 초)."""
    rows = []
    for event in profile.events():
        device_type = str(event.device_type).rsplit(".", 1)[-1]
        start, end = event.time_range.start / 1e6, event.time_range.end / 1e6
        rows.append((event.name, kind_of(event.name, device_type), start, end))
    return rows


# kineto(프로파일러의 C++ 쪽)가 표준 오류에 바로 쓰는 줄:
#   "USDT:2026-12-07 20:59:15 13559:13559 SyncActivityProfilerHandler.cpp:52] profiler_start"
KINETO_LINE = re.compile(rb"^[A-Z]+:\d{4}-\d\d-\d\d [\d:.]+ \d+:\d+ [^\]]+\] ")


@contextlib.contextmanager
def native_stderr_quiet():
    """그동안 C++가 fd 2에 쓰는 kineto의 줄을 작업의 출력에 섞지 않습니다(torch 2.13은 프로파일러를
    켜고 끌 때마다 한 줄씩 씁니다). fd 2를 임시 파일로 돌렸다가, kineto의 줄이 아닌 것은 그대로
    다시 씁니다. fd 2를 돌릴 수 없으면 아무것도 하지 않습니다."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept = [line for line in caught.readlines() if not KINETO_LINE.match(line)]
            if kept:
                os.write(2, b"".join(kept))


class StepProfiler:
    """프로파일러 한 스텝: start()는 스텝 앞에서, stop()은 스텝 끝에서 부릅니다.

    stop()은 띄운 커널이 모두 끝나기를 기다린 뒤 닫고 기록한 프로파일을 돌려줍니다."""

    def __init__(self, synchronize):
        self.synchronize = synchronize
        self.recorded = None

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self.recorded = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        self.recorded.__enter__()

    def stop(self):
        try:
            self.synchronize()
        finally:
            self.recorded.__exit__(None, None, None)
        return self.recorded


def collect_profile(step) -> dict:
    """step()을 한 번 CUDA 활동을 기록하는 프로파일러 안에서 돌리고 증거로 줄입니다.

    스텝의 길이는 기록된 모든 이벤트(호스트와 장치)의 처음부터 끝까지입니다: 호스트가 커널을
    띄우느라 GPU가 쉬는 틈도 스텝에 들어갑니다."""
    profiler = Cuda().profiler()
    profiler.start()
    try:
        step()
    finally:
        recorded = profiler.stop()
    return summary_of_step(profiler_events(recorded))


def summary_of_step(events) -> dict:
    if not events:
        return profile_summary(events, 0.0, 0.0)
    return profile_summary(events, min(e[2] for e in events), max(e[3] for e in events))
