"""CUDA 경로의 마른 실행(dry run): GPU 없이, 기록하거나 합성한 이벤트를 순수 함수에 넣어 봅니다.

GPU에서 돌렸다는 뜻이 아닙니다. GPU에서는 tools/gpu_check.sh가 같은 경로를 진짜 이벤트로 돌립니다.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from torchdoctor import gpu

HERE = str(Path(__file__).resolve())


class FakeClock:
    now = 0.0


class FakeEvent:
    """torch.cuda.Event처럼 record()와 elapsed_time(밀리초)을 주는 가짜 이벤트(가짜 시계)."""

    def record(self):
        self.at = FakeClock.now

    def elapsed_time(self, other):
        return (other.at - self.at) * 1000


def test_step_and_data_time_come_from_events_at_each_boundary_and_fetch():
    events = gpu.StepEvents(event_factory=FakeEvent)
    FakeClock.now = 0.0
    events.boundary()
    for step_length, wait in ((0.010, 0.004), (0.020, 0.0)):
        start = FakeClock.now
        with events.fetch():
            FakeClock.now += wait
        FakeClock.now = start + step_length
        events.boundary()
    synced = []
    step_s, data_s = events.read(synchronize=lambda: synced.append(True))
    assert synced == [True]  # 창이 끝난 뒤 한 번만 동기화합니다
    assert step_s == pytest.approx([0.010, 0.020])
    assert data_s == pytest.approx([0.004, 0.0])


class Caught:
    def __init__(self, message, filename, lineno):
        self.message, self.filename, self.lineno = message, filename, lineno


def test_sync_warnings_are_counted_per_reader_line_and_per_step():
    message = "called a synchronizing CUDA operation"
    records = [Caught(message, HERE, 10)] * 4 + [Caught(message, HERE, 12)] * 2
    records += [Caught(message, torch.__file__, 99)]  # torch 안의 줄은 독자가 고칠 수 없습니다
    records += [Caught("some other warning", HERE, 20)]
    rows = gpu.sync_sites(records, steps=2)
    assert [(row["line"], row["count"], row["per_step"]) for row in rows] == [
        (10, 4, 2),
        (12, 2, 1),
    ]


def test_no_sync_warning_means_no_sync_site():
    assert gpu.sync_sites([Caught("deprecated", HERE, 3)], steps=2) == []


def test_catching_sync_warnings_needs_cuda_and_restores_nothing_on_cpu():
    if torch.cuda.is_available():
        pytest.skip("GPU가 있는 기계에서는 tools/gpu_check.sh가 진짜로 돌립니다")
    with pytest.raises((RuntimeError, AssertionError)), warnings.catch_warnings():
        with gpu.sync_warnings_caught():
            pass


def synthetic_step():
    """기록한 GPU 한 스텝을 닮은 합성 이벤트(초): 고정되지 않은 복사 하나, 짧은 커널 여럿."""
    events = [("aten::mm", "other", 0.0, 0.001)]
    events.append((gpu.PAGEABLE_HTOD, "memcpy", 0.0001, 0.0003))
    events.append(("Memcpy HtoD (Pinned -> Device)", "memcpy", 0.0003, 0.0004))
    start = 0.0004
    for _ in range(10):
        events.append(("void gemv_kernel", "kernel", start, start + 5e-6))
        start += 50e-6  # 커널 사이에 45 µs를 쉽니다
    events.append(("void big_gemm", "kernel", 0.0009, 0.001))
    return events


def test_a_profiled_step_gives_pageable_copies_idle_share_and_kernel_sizes():
    summary = gpu.summary_of_step(synthetic_step())
    assert summary["pageable_htod"] == {"count": 1, "seconds": pytest.approx(0.0002)}
    kernels = summary["kernels"]
    assert kernels["count"] == 11 and kernels["median_s"] == pytest.approx(5e-6)
    assert kernels["short_share"] == pytest.approx(10 / 11, abs=1e-4)
    # 일한 시간: 복사 0.3 ms + 커널 10×5 µs + 0.1 ms = 0.45 ms, 스텝 1 ms → 쉰 몫 55%
    assert summary["idle_share"] == pytest.approx(0.55, abs=1e-3)
    assert summary["unverified"] == gpu.UNVERIFIED


def test_a_step_without_pageable_copies_or_kernels_reports_none():
    summary = gpu.summary_of_step([("aten::add", "other", 0.0, 1.0)])
    assert summary["pageable_htod"]["count"] == 0
    assert summary["kernels"]["count"] == 0 and summary["idle_share"] == 1.0
    assert gpu.summary_of_step([])["idle_share"] is None


def test_overlapping_kernels_are_counted_once_as_busy_time():
    assert gpu.busy_seconds([(0, 2), (1, 3), (5, 6)]) == 4
    assert gpu.busy_seconds([(0, 4), (1, 2)]) == 4
    assert gpu.idle_share([(0, 1)], 0, 4) == 0.75
    assert gpu.idle_share([(-1, 1), (3, 9)], 0, 4) == 0.5  # 스텝 밖은 잘라 냅니다


def test_profiler_events_are_read_from_a_real_cpu_profile():
    # CPU에서 기록한 진짜 프로파일: 이벤트의 모양(name, device_type, time_range)을 확인합니다.
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as recorded:
        torch.ones(8, 8) @ torch.ones(8, 8)
    rows = gpu.profiler_events(recorded)
    assert any(name == "aten::matmul" for name, *_ in rows)
    assert all(kind == "other" and end >= start for _, kind, start, end in rows)
    assert gpu.kind_of("Memcpy HtoD (Pageable -> Device)", "CUDA") == "memcpy"
    assert gpu.kind_of("ampere_sgemm", "CUDA") == "kernel"
