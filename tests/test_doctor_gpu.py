"""CUDA 경로의 마른 실행(dry run): GPU 없이, 기록하거나 합성한 이벤트를 순수 함수에 넣어 봅니다.

GPU에서 돌렸다는 뜻이 아닙니다. GPU에서는 tools/gpu_check.sh가 같은 경로를 진짜 이벤트로 돌립니다.
"""

from __future__ import annotations

import importlib.util
import os
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from torchdoctor import catalog, gpu, probes, rules
from torchdoctor import doctor as doctor_module

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


# ----- 진단기 안의 CUDA 경로: 작은 진짜 학습 루프(CPU)에 가짜 CUDA -----
SYNC_MESSAGE = "called a synchronizing CUDA operation"
# 가짜 GPU 시계의 눈금: 2진 분수라 더하고 빼도 어긋나지 않습니다(시험이 값을 정확히 봅니다)
TICK = 1 / 1024
DATA_S, COMPUTE_S = 3 * TICK, 4 * TICK  # 배치를 기다림, 계산
SYNC_WAITS = {torch.Tensor.item: 2 * TICK, torch.Tensor.nonzero: TICK}  # 동기화에서 GPU를 기다림
STEP_S = 10 * TICK  # 스텝 하나: 기다림 3 + 계산 4 + `.item()` 2 + `.nonzero()` 1
WATCH = {"skip_steps": 1, "probe_steps": 2, "steps": 5, "measure_fixes": False}


def line_of(name: str) -> int:
    """이 파일에서 `# 이름` 표시가 있는 줄(작업에 심어 둔 동기화의 줄)."""
    marker = "# " + name
    lines = Path(HERE).read_text(encoding="utf-8").splitlines()
    (number,) = [n for n, text in enumerate(lines, 1) if text.rstrip().endswith(marker)]
    return number


class ClockEvent:
    """가짜 CUDA 이벤트: record()는 가짜 GPU 시계를 읽고 elapsed_time은 밀리초를 줍니다."""

    def __init__(self, fake):
        self.fake = fake

    def record(self):
        self.at = self.fake.read_clock()

    def elapsed_time(self, other):
        return (other.at - self.at) * 1000


class FakeProfile:
    """torch.profiler.profile처럼 events()를 주는 기록(FunctionEvent를 닮은 것, 마이크로초)."""

    def __init__(self, rows):
        self.rows = rows

    def events(self):
        return [
            SimpleNamespace(
                name=name,
                device_type="DeviceType.CPU" if kind == "other" else "DeviceType.CUDA",
                time_range=SimpleNamespace(start=start * 1e6, end=end * 1e6),
            )
            for name, kind, start, end in self.rows
        ]


class FakeProfiler:
    """스텝 동안 진짜 CPU 프로파일러를 켭니다(진단기가 자기 프로파일러를 "켜 둔 디버깅 도구"로
    세지 않는지 보려고). 돌려주는 기록은 synthetic_step()의 GPU 한 스텝입니다."""

    def __init__(self, fake):
        self.fake = fake

    def start(self):
        from torch.profiler import ProfilerActivity, profile

        self.fake._called("profiler_start")
        self.fake.profiled.append(("start", getattr(self.fake.doctor, "step", None)))
        self.real = profile(activities=[ProfilerActivity.CPU])
        self.real.__enter__()

    def stop(self):
        self.real.__exit__(None, None, None)
        self.fake.profiled.append(("stop", getattr(self.fake.doctor, "step", None)))
        return FakeProfile(synthetic_step())


class FakeCuda:
    """gpu.Cuda와 같은 이름을 가진 가짜. 부른 것을 모두 적습니다.

    fail: 실패시킬 것("event", "sync_warnings", "profiler"). 진단기가 작업을 멈추지 않고
    나머지 진단을 계속하는지 봅니다."""

    def __init__(self, fail=None, real_time=False):
        self.now = 0.0
        self.mode = 0
        self.modes: list = []  # set_sync_debug_mode에 넘긴 값
        self.synced: list = []  # synchronize()를 부른 때의 (진단기 단계, 끝난 스텝 수)
        self.profiled: list = []
        self.calls: list = []
        self.clock_reads = 0
        self.fail, self.real_time = fail, real_time
        self.doctor = None

    def read_clock(self):
        return time.perf_counter() if self.real_time else self.now

    def clock(self):
        self.clock_reads += 1
        return self.now

    def _called(self, name):
        self.calls.append(name)
        in_window = getattr(self.doctor, "phase", None) == "timed"
        if name == self.fail and (name != "event" or in_window):  # 이벤트는 시간 창에서만 실패
            raise RuntimeError(f"가짜 {name} 오류")

    def event(self):
        self._called("event")
        return ClockEvent(self)

    def synchronize(self):
        self.calls.append("synchronize")
        self.synced.append(
            (getattr(self.doctor, "phase", None), getattr(self.doctor, "step", None))
        )

    def set_mode(self, mode):
        self.modes.append(mode)
        self.mode = mode

    def sync_warnings(self):
        self._called("sync_warnings")
        return gpu.sync_warnings_caught(get_mode=lambda: self.mode, set_mode=self.set_mode)

    def profiler(self):
        self._called("profiler")
        return FakeProfiler(self)


class OnCuda(torch.Tensor):
    """CPU 텐서지만 CUDA 텐서처럼 보입니다(is_cuda). `.item()`과 `.nonzero()`는 GPU를 기다리는
    만큼 가짜 시계를 돌리고, 가짜 동기화 모드가 warn이면 torch처럼 그 호출 안에서 경고합니다."""

    fake: FakeCuda | None = None

    @property
    def is_cuda(self):
        return True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        wait = SYNC_WAITS.get(func)
        if wait is not None and cls.fake is not None:
            cls.fake.now += wait
            if cls.fake.mode == "warn":
                warnings.warn(SYNC_MESSAGE, stacklevel=1)
        return super().__torch_function__(func, types, args, kwargs or {})


def pretend_sync(fake):
    """torch 함수 밖에서 난 동기화 경고(호출 탐침이 볼 수 없는 곳): 부른 줄을 가리킵니다."""
    if fake.mode == "warn":
        warnings.warn(SYNC_MESSAGE, stacklevel=2)


class WaitingData(torch.utils.data.Dataset):
    """배치 하나를 내는 데 가짜 시계로 DATA_S가 걸리는 데이터셋(배치 단위, batch_size=None)."""

    def __init__(self, fake, batches):
        self.fake, self.x = fake, torch.randn(batches, 8, 4)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        self.fake.now += DATA_S
        return self.x[index]


def train(fake, batches=12):
    """작은 진짜 학습 루프: 층이 많은 MLP(연산이 많음), 고정되지 않은 로더, 심어 둔 동기화 셋."""
    torch.manual_seed(0)
    OnCuda.fake = fake
    layers = [m for _ in range(40) for m in (torch.nn.Linear(4, 4), torch.nn.ReLU())]
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(WaitingData(fake, batches), batch_size=None)
    losses = []
    for x in loader:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        fake.now += COMPUTE_S
        optimizer.step()
        losses.append(loss.detach().as_subclass(OnCuda).item())  # SYNC-ITEM
        (x.sum(dim=1) > 0).as_subclass(OnCuda).nonzero()  # SYNC-NONZERO
        pretend_sync(fake)  # SYNC-WARNED
    return losses


@pytest.fixture
def fake_cuda(monkeypatch):
    """진단기가 CUDA라고 여기게 하고(device_kind), 가짜 CUDA를 줍니다."""
    monkeypatch.setattr(doctor_module, "device_kind", lambda: "cuda")
    yield FakeCuda()
    OnCuda.fake = None


def watched(fake, batches=12, **options):
    """train()을 진단기 안에서 돌립니다: (진단기, 손실, 새어 나온 경고)."""
    watcher = doctor_module.Doctor(cuda=fake, **(WATCH | options))
    fake.doctor = watcher
    with warnings.catch_warnings(record=True) as leaked:
        warnings.simplefilter("always")
        with watcher:
            losses = train(fake, batches)
    return watcher, losses, leaked


def by_rule(report, rule):
    return [item for item in report.findings if item["rule"] == rule]


def test_on_cuda_the_doctor_wires_events_sync_warnings_and_one_profiled_step(fake_cuda, capfd):
    watcher, losses, leaked = watched(fake_cuda)
    assert capfd.readouterr() == ("", "")  # 작업이 도는 동안 아무것도 찍지 않습니다
    assert leaked == []  # 동기화 경고가 작업의 출력으로 새지 않습니다
    assert not watcher.errors
    ev = watcher.evidence()
    # 시간 창(스텝 6–10): CUDA 이벤트로 잰 스텝과, 배치를 기다리느라 GPU가 쉰 시간
    assert ev["gpu_step_s"] == [STEP_S] * 5
    assert ev["gpu_data_s"] == [DATA_S] * 5
    assert len(ev["step_s"]) == len(ev["data_s"]) == 5  # 호스트 시계도 그대로 잽니다
    # 동기화는 연산 탐침의 끝과, 창이 닫힌 뒤 한 번뿐입니다(창의 스텝 안에서는 부르지 않습니다)
    assert fake_cuda.synced == [("ops", 4), ("after", 10)]
    # 동기화 경고는 호출 탐침 스텝(2–3) 동안만 켜고, 끝나면 전의 모드로 되돌립니다
    assert fake_cuda.modes == ["warn", 0]
    # 프로파일러는 연산 탐침 다음의 한 스텝(5)만: 스텝 4가 끝날 때 켜고 스텝 5가 끝날 때 끕니다
    assert fake_cuda.profiled == [("start", 4), ("stop", 5)]
    assert ev["debug"]["profiler_steps"] == 0 and ev["debug"]["profiler_at"] is None
    assert not watcher.own_profiler  # 끈 뒤에는 작업이 켠 프로파일러를 다시 셉니다
    profile = ev["profile"]  # synthetic_step()을 프로파일러의 이벤트 모양으로 거쳐 줄인 것
    assert profile["pageable_htod"] == {"count": 1, "seconds": pytest.approx(0.0002)}
    assert profile["idle_share"] == pytest.approx(0.55, abs=1e-4)
    assert (profile["kernels"]["count"], profile["kernels"]["short_share"]) == (11, 0.9091)
    assert profile["unverified"] == catalog.NOT_RUN_ON_GPU
    # 호출 탐침: CUDA 텐서의 `.item()`을 세고 그 안에서 보낸 시간을 잽니다
    item, nonzero, warned = line_of("SYNC-ITEM"), line_of("SYNC-NONZERO"), line_of("SYNC-WARNED")
    (row,) = ev["syncs"]
    assert (row["what"], row["line"], row["per_step"]) == ("`.item()`", item, 1.0)
    assert row["seconds_per_step"] == 2 * TICK
    rows = sorted(ev["cuda_syncs"], key=lambda r: r["line"])
    assert [(r["line"], r["count"], r["per_step"]) for r in rows] == [
        (item, 2, 1.0),
        (nonzero, 2, 1.0),
        (warned, 2, 1.0),
    ]
    assert (rows[0]["seconds_per_step"], rows[1]["seconds_per_step"]) == (2 * TICK, TICK)
    assert rows[2]["seconds_per_step"] is None  # torch 함수 밖의 경고는 잴 호출이 없습니다
    assert all(r["file"] == HERE for r in rows)


def test_the_doctor_does_not_change_the_jobs_losses_on_the_cuda_path(fake_cuda):
    _, with_doctor, _ = watched(fake_cuda)
    assert with_doctor == train(FakeCuda())
    assert len(with_doctor) == 12


def test_on_cuda_the_rules_read_the_gpu_clock_sync_warnings_and_the_profile(fake_cuda):
    watcher, _, _ = watched(fake_cuda)
    report, ev = watcher.report(), watcher.evidence()
    (wait,) = by_rule(report, "data-wait")
    assert wait["share"] == 0.3  # GPU 시계: 3 / 10
    host = round(sum(ev["data_s"]) / sum(ev["step_s"]), 4)
    assert wait["evidence"] == {
        "data_share": 0.3,
        "num_workers": 0,
        "clock": "gpu",
        "host_data_share": host,
    }
    assert wait["message"].endswith(rules.CLOCK_NOTE["gpu"])
    assert wait["unverified"] == catalog.NOT_RUN_ON_GPU
    (pin,) = by_rule(report, "unpinned-batches")
    assert pin["evidence"]["pageable_htod"] == 1 and pin["evidence"]["clock"] == "gpu"
    assert "호스트→장치 복사가 1번(200 µs) 있었습니다" in pin["message"]
    syncs = {item["line"]: item for item in by_rule(report, "host-sync")}
    item, nonzero, warned = line_of("SYNC-ITEM"), line_of("SYNC-NONZERO"), line_of("SYNC-WARNED")
    assert set(syncs) == {item, nonzero, warned}  # `.item()`은 한 번만(호출 탐침과 경고가 같은 줄)
    assert (
        syncs[item]["evidence"]["call"] == "`.item()`"
        and "스텝마다 1.95 ms입니다" in syncs[item]["message"]
    )
    assert syncs[nonzero]["evidence"]["source"] == "set_sync_debug_mode"
    assert "스텝마다 977 µs입니다" in syncs[nonzero]["message"]
    assert "호스트 시간" not in syncs[warned]["message"]
    assert all(i["unverified"] == catalog.NOT_RUN_ON_GPU for i in syncs.values())
    assert ev["ops"]["ops"] > rules.LAUNCH_OPS  # 층이 많아 연산이 많습니다
    (launch,) = by_rule(report, "launch-bound")
    assert launch["share"] == 0.55  # 프로파일러 한 스텝의 쉰 몫
    assert launch["evidence"] == {"idle_share": 0.55, "short_share": 0.9091}
    assert report["steps"]["gpu_data_share"] == 0.3


def test_on_a_cpu_the_cuda_tools_are_never_touched_and_the_evidence_has_no_gpu_values(monkeypatch):
    monkeypatch.setattr(doctor_module, "device_kind", lambda: "cpu")  # GPU가 있는 기계에서도 CPU로
    fake = FakeCuda()
    try:
        watcher, losses, leaked = watched(fake)
    finally:
        OnCuda.fake = None
    assert watcher.kind == "cpu"
    assert fake.calls == [] and fake.clock_reads == 0 and fake.modes == []
    ev = watcher.evidence()
    assert (ev["gpu_step_s"], ev["gpu_data_s"], ev["cuda_syncs"], ev["profile"]) == (None,) * 4
    assert len(ev["step_s"]) == 5 and ev["steps_seen"] == 12
    phases = [watcher._phase_of(step) for step in range(1, 12)]
    assert phases == ["warmup", "calls", "calls", "ops"] + ["timed"] * 5 + ["after"] * 2
    # CPU에서는 모든 `.item()`을 "GPU에서라면" 동기화로 셉니다(시간은 재지 않음)
    (row,) = ev["syncs"]
    assert "seconds_per_step" not in row
    (sync,) = by_rule(watcher.report(), "host-sync")
    assert sync["evidence"] == {"per_step": 1.0, "call": "`.item()`"}
    assert sync["unverified"] is None and "GPU에서라면" in sync["message"]
    assert leaked == []


def test_on_cuda_one_profiled_step_sits_between_the_op_probe_and_the_window(fake_cuda):
    watcher = doctor_module.Doctor(cuda=fake_cuda, **WATCH)
    phases = [watcher._phase_of(step) for step in range(1, 12)]
    assert phases == ["warmup", "calls", "calls", "ops", "profile"] + ["timed"] * 5 + ["after"]
    assert watcher.probe_step_count() == 4
    timed = doctor_module.Doctor(cuda=fake_cuda, **WATCH).start_timed()
    try:
        assert timed.phase == "timed" and timed.step == 4  # 탐침 넷(프로파일러 포함)을 지난 것으로
        assert timed.events is not None
    finally:
        timed.stop()


def test_the_doctor_leaves_the_profiler_to_a_job_that_runs_its_own(fake_cuda):
    from torch.profiler import ProfilerActivity, profile

    watcher = doctor_module.Doctor(cuda=fake_cuda, **WATCH)
    fake_cuda.doctor = watcher
    with watcher, profile(activities=[ProfilerActivity.CPU]):  # 작업이 켠 프로파일러
        train(fake_cuda)
    assert fake_cuda.profiled == [] and watcher.errors == []  # 켜지 않았고, 실패도 없습니다
    ev = watcher.evidence()
    assert ev["profile"] is None and ev["debug"]["profiler_steps"] == 12
    assert ev["gpu_step_s"] == [STEP_S] * 5  # 나머지 CUDA 경로는 그대로


def test_a_job_that_stops_inside_the_profiled_step_gets_the_profiler_turned_off(fake_cuda):
    watcher, _, _ = watched(fake_cuda, batches=4)  # 스텝 4가 끝나며 켠 프로파일러의 스텝에서 끝남
    assert fake_cuda.profiled == [("start", 4), ("stop", 4)]
    assert watcher.evidence()["profile"] is None  # 끝나지 않은 스텝은 줄이지 않습니다
    assert not watcher.own_profiler and not torch._C._autograd._profiler_enabled()
    assert watcher.errors == []


def test_the_real_step_profiler_waits_for_the_device_before_it_closes():
    seen = []
    profiler = gpu.StepProfiler(lambda: seen.append(torch._C._autograd._profiler_enabled()))
    with warnings.catch_warnings(), gpu.native_stderr_quiet():
        warnings.simplefilter("ignore")  # 이 CPU 빌드에는 CUDA 활동이 없다는 경고
        profiler.start()
        torch.ones(4, 4) @ torch.ones(4, 4)
        recorded = profiler.stop()
    assert seen == [True]  # 동기화는 프로파일러를 닫기 전에 한 번
    assert not torch._C._autograd._profiler_enabled()
    assert any(name == "aten::matmul" for name, *_ in gpu.profiler_events(recorded))


def test_a_job_that_stops_inside_the_window_reads_the_events_once_at_stop(fake_cuda):
    watcher, _, _ = watched(fake_cuda, batches=7)  # 창의 스텝 6, 7까지만
    ev = watcher.evidence()
    assert ev["gpu_step_s"] == [STEP_S] * 2
    assert len(ev["step_s"]) == 2
    assert fake_cuda.synced == [("ops", 4), ("timed", 7)]  # 작업이 끝난 뒤(stop) 한 번


@pytest.mark.parametrize(
    ("fail", "error", "lost"),
    [
        ("event", "CUDA 이벤트: RuntimeError: 가짜 event 오류", "gpu_step_s"),
        ("sync_warnings", "동기화 경고: RuntimeError: 가짜 sync_warnings 오류", "cuda_syncs"),
        ("profiler", "프로파일러: RuntimeError: 가짜 profiler 오류", "profile"),
        ("profiler_start", "프로파일러: RuntimeError: 가짜 profiler_start 오류", "profile"),
    ],
)
def test_a_failing_cuda_piece_is_written_down_and_the_job_and_the_rest_go_on(
    fake_cuda, fail, error, lost
):
    fake = FakeCuda(fail=fail)
    watcher, losses, _ = watched(fake)
    assert losses == train(FakeCuda())  # 작업은 끝까지, 같은 값으로
    assert watcher.errors == [error]  # 한 번만 적습니다
    ev = watcher.evidence()
    assert ev[lost] in (None, [])
    assert len(ev["step_s"]) == 5 and ev["steps_seen"] == 12  # 나머지 진단은 그대로
    if fail.startswith("profiler"):
        assert fake.profiled == [] and not watcher.own_profiler
        assert not torch._C._autograd._profiler_enabled()
    if fail != "event":
        assert ev["gpu_step_s"] == [STEP_S] * 5


def test_sync_warnings_are_caught_only_while_on_and_other_warnings_pass_through():
    state = {"mode": 0}
    modes = []

    def set_mode(mode):
        modes.append(mode)
        state["mode"] = mode

    with warnings.catch_warnings(record=True) as passed:
        warnings.simplefilter("default")  # 같은 줄의 경고는 한 번만: 잡는 동안만 "always"로
        filters, shown = list(warnings.filters), warnings.showwarning
        with gpu.sync_warnings_caught(get_mode=lambda: state["mode"], set_mode=set_mode) as caught:
            assert state["mode"] == "warn"
            for _ in range(3):
                warnings.warn(SYNC_MESSAGE, stacklevel=1)  # CAUGHT-LINE
            warnings.warn("작업의 다른 경고", stacklevel=1)
        assert warnings.filters == filters and warnings.showwarning is shown
        warnings.warn(SYNC_MESSAGE, stacklevel=1)  # 끈 뒤의 경고는 잡지 않습니다
    assert modes == ["warn", 0]
    assert [(r.filename, r.lineno, r.seconds) for r in caught] == [
        (HERE, line_of("CAUGHT-LINE"), None)
    ] * 3
    assert [str(w.message) for w in passed] == ["작업의 다른 경고", SYNC_MESSAGE]


def test_sync_sites_add_up_the_time_of_timed_records_per_step():
    records = [gpu.SyncRecord(SYNC_MESSAGE, HERE, 5, 0.004)] * 2
    records += [gpu.SyncRecord(SYNC_MESSAGE, HERE, 5, None)]
    records += [gpu.SyncRecord(SYNC_MESSAGE, HERE, 9)]
    rows = gpu.sync_sites(records, steps=2)
    assert [(r["line"], r["count"], r["per_step"]) for r in rows] == [(5, 3, 1.5), (9, 1, 0.5)]
    assert rows[0]["seconds_per_step"] == pytest.approx(0.004)
    assert rows[1]["seconds_per_step"] is None
    assert rows[0]["file"] == HERE  # 호출 탐침의 줄과 맞대도록 파일 이름을 그대로 둡니다


class Clock:
    def __init__(self, *readings):
        self.readings = list(readings)

    def __call__(self):
        return self.readings.pop(0)


def test_on_cuda_the_call_watch_times_sync_calls_and_moves_warnings_to_the_calling_line():
    watch = probes.CallWatch("cuda", clock=Clock(1.0, 1.25, 2.0, 2.5))
    tensor = torch.ones(1).as_subclass(OnCuda)

    def synchronizing():  # 호출 하나 안에서 동기화 둘: 잰 시간을 둘로 나눕니다
        warnings.warn(SYNC_MESSAGE, stacklevel=1)
        warnings.warn("다른 경고", stacklevel=1)
        warnings.warn(SYNC_MESSAGE, stacklevel=1)
        return torch.ones(1)

    with warnings.catch_warnings(record=True) as leaked:
        warnings.simplefilter("always")
        watch.__torch_function__(torch.Tensor.item, (), (tensor,))  # WATCH-ITEM
        watch.__torch_function__(synchronizing, (), ())  # WATCH-WARNED
    assert leaked == []  # 탐침 스텝의 경고는 버리거나 옮겨 적습니다
    key = ("`.item()`", HERE, line_of("WATCH-ITEM"))
    assert watch.syncs[-1] == {key: 1}
    assert watch.sync_seconds[-1] == {key: 0.25}
    records = [(r.filename, r.lineno, r.seconds) for r in watch.sync_records[-1]]
    assert records == [(HERE, line_of("WATCH-WARNED"), 0.25)] * 2
    watch.drop_last_step()
    assert watch.sync_records == watch.sync_seconds == watch.syncs == []


def test_a_sync_warning_inside_a_library_call_is_not_put_on_a_readers_line(monkeypatch):
    watch = probes.CallWatch("cuda", clock=Clock(1.0, 2.0))
    monkeypatch.setattr(
        probes, "direct_caller", lambda: None
    )  # 부른 곳이 torch.optim 같은 라이브러리
    with warnings.catch_warnings(record=True):
        watch.__torch_function__(lambda: warnings.warn(SYNC_MESSAGE, stacklevel=1), (), ())
    assert watch.sync_records == [[]]


def test_on_a_cpu_the_call_watch_reads_no_clock():
    watch = probes.CallWatch("cpu", clock=Clock())  # 읽으면 IndexError
    watch.__torch_function__(torch.Tensor.item, (), (torch.ones(1),))
    assert sum(watch.syncs[-1].values()) == 1 and watch.sync_seconds[-1] == {}


def test_the_report_header_gives_both_clocks_on_cuda_and_one_on_a_cpu():
    from torchdoctor import report

    ev = {"step_s": [0.01] * 2, "data_s": [0.006] * 2, "gpu_step_s": [0.01] * 2}
    ev["gpu_data_s"] = [0.001] * 2
    steps = report.build(ev, {}, [])["steps"]
    assert steps["gpu_data_share"] == 0.1 and steps["data_share"] == 0.6
    text = report.text(report.build(ev, {}, []))
    assert "배치를 기다린 몫 10%(GPU 시계)·60%(호스트 시계)" in text
    cpu = dict(ev, gpu_step_s=None, gpu_data_s=None)
    assert "gpu_data_share" not in report.build(cpu, {}, [])["steps"]
    assert "배치를 기다린 몫 60%\n" in report.text(report.build(cpu, {}, []))
    zero = dict(ev, gpu_step_s=[0.0, 0.0])
    assert "gpu_data_share" not in report.build(zero, {}, [])["steps"]


# ----- tools/doctor_gpu_paths.py: GPU 점검의 진단기 부분(여기서는 CPU와 가짜로만) -----
def gpu_paths_tool():
    spec = importlib.util.spec_from_file_location(
        "doctor_gpu_paths", Path(HERE).parents[1] / "tools" / "doctor_gpu_paths.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gpu_check_finds_its_planted_item_line_and_checks_each_doctor_path():
    tool = gpu_paths_tool()
    line = tool.planted_line()
    source = Path(tool.__file__).read_text(encoding="utf-8").splitlines()
    assert "return loss.item()" in source[line - 1]
    good = {
        "gpu_step_s": [0.01] * 5,
        "gpu_data_s": [0.0] * 5,
        "cuda_syncs": [{"file": tool.__file__, "line": line, "per_step": 1.0}],
        "profile": {"pageable_htod": {"count": 1, "seconds": 1e-4}},
        "errors": [],
    }
    assert all(tool.doctor_checks(good, line).values())
    bad = {
        "gpu_step_s": [0.01] * 4,
        "gpu_data_s": [0.0] * 4,
        "cuda_syncs": [{"file": tool.__file__, "line": line + 1, "per_step": 1.0}],
        "profile": {"pageable_htod": {"count": 0, "seconds": 0.0}},
        "errors": ["x"],
    }
    assert not any(tool.doctor_checks(bad, line).values())
    assert not tool.doctor_checks(dict(good, cuda_syncs=[]), line)["doctor_item_sync"]
    half = [{"file": tool.__file__, "line": line, "per_step": 0.5}]
    assert not tool.doctor_checks(dict(good, cuda_syncs=half), line)["doctor_item_sync"]
    assert not tool.doctor_checks(dict(good, gpu_step_s=[0.01] * 4 + [0.0]), line)[
        "doctor_gpu_step_s"
    ]


def test_the_gpu_checks_doctor_part_runs_on_a_cpu_with_fakes_but_finds_no_real_sync(monkeypatch):
    # 마른 실행: 진단기 전체가 도구의 작업에서 돌고 증거의 키가 차는지. CPU 텐서는 동기화 경고를
    # 내지 않으므로 `.item()` 줄은 찾지 못합니다(그것은 GPU에서만 확인합니다).
    monkeypatch.setattr(doctor_module, "device_kind", lambda: "cuda")
    tool = gpu_paths_tool()
    fake = FakeCuda(real_time=True)
    result = tool.watch_job("cpu", cuda=fake)
    checks = tool.doctor_checks(result["evidence"], tool.planted_line())
    assert checks == {
        "doctor_gpu_step_s": True,
        "doctor_gpu_data_s": True,
        "doctor_item_sync": False,
        "doctor_pageable": True,
        "doctor_no_errors": True,
    }
    assert fake.modes == ["warn", 0] and len(fake.profiled) == 2


def test_the_profilers_native_lines_are_dropped_and_other_stderr_is_kept(capfd):
    with gpu.native_stderr_quiet():
        os.write(2, b"USDT:2026-12-07 20:59:15 13559:13559 SyncActivityProfilerHandler.cpp:52] x\n")
        os.write(2, b"job: epoch 1\n")
        os.write(2, b"STAGE:2024-01-02 03:04:05 77:78 ActivityProfilerController.cpp:312] y\n")
    assert capfd.readouterr().err == "job: epoch 1\n"
