"""작업을 지켜보는 부분: 옵티마이저 스텝 훅으로 스텝을 나누고, 단계마다 필요한 것만 켭니다.

스텝의 단계(옵티마이저의 전역 스텝 훅이 경계를 정하므로 보통 루프와 Lightning이 같습니다):
    워밍업(skip_steps) → 호출 탐침(probe_steps) → 연산 탐침(1) → [CUDA: 프로파일러(1)]
    → 시간 창(steps) → 그 뒤
흔드는 관찰(탐침)은 시간 창 밖의 자기 스텝에서만 켭니다. 시간 창에서는 스텝 경계의 시각과
다음 배치를 기다린 시간만 적습니다(CUDA에서는 같은 곳에 CUDA 이벤트도 찍고, 창이 닫힌 뒤 한 번
동기화해 읽습니다). 작업이 계산하는 것(난수 상태, 데이터 순서, 모델, 옵티마이저)은 건드리지
않습니다. 훅 안의 오류는 작업으로 올리지 않고 적어 두었다가 보고서에 씁니다.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import warnings
import weakref
from collections import Counter

import torch
from torch.optim import optimizer as optimizer_module
from torch.utils.data import dataloader as dataloader_module

from torchdoctor import gpu, probes, where


def device_kind() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def gpu_info() -> dict | None:
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return {"name": torch.cuda.get_device_name(), "capability": [major, minor]}


def tf32_matmul_on() -> bool:
    """CUDA 행렬 곱이 TF32를 쓰는지(새 API가 있으면 그것으로, 없으면 예전 플래그로)."""
    precision = getattr(torch.backends.cuda.matmul, "fp32_precision", None)
    if precision is not None:
        return precision == "tf32"
    return bool(torch.backends.cuda.matmul.allow_tf32)


def rank_info() -> dict | None:
    """torchrun이 띄운 프로세스면 이 프로세스의 순위와 전체 수."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        return {"rank": int(os.environ["RANK"]), "world_size": int(os.environ["WORLD_SIZE"])}
    return None


class Patches:
    """작업의 객체는 그대로 두고, 클래스의 메서드 몇 개를 잠시 감쌉니다(끝나면 되돌립니다)."""

    def __init__(self):
        self.saved: list[tuple[object, str, object]] = []

    def wrap(self, owner: object, name: str, make) -> None:
        original = owner.__dict__[name]
        self.saved.append((owner, name, original))
        setattr(owner, name, make(original))

    def undo(self) -> None:
        for owner, name, original in reversed(self.saved):
            setattr(owner, name, original)
        self.saved = []


class Doctor:
    """작업 하나를 지켜보는 진단기. `with torchdoctor.watch() as doctor:` 또는 start()/stop()."""

    def __init__(
        self,
        *,
        skip_steps: int = 5,
        steps: int = 20,
        probe_steps: int = 2,
        measure_fixes: bool = True,
        fix_budget_s: float = 20.0,
        script: str | None = None,
        cuda=None,
    ):
        if skip_steps < 0 or steps < 1 or probe_steps < 1:
            raise ValueError("skip_steps는 0 이상, steps와 probe_steps는 1 이상이어야 합니다")
        self.skip_steps, self.steps, self.probe_steps = skip_steps, steps, probe_steps
        self.measure_fixes, self.fix_budget_s = measure_fixes, fix_budget_s
        self.script = script
        self.kind = device_kind()
        # CUDA에서 부르는 것(이벤트, 동기화, 동기화 경고, 프로파일러): 시험은 가짜를 넘깁니다
        self.cuda = cuda if cuda is not None else gpu.Cuda()
        self.outcome = "finished"  # finished | raised | interrupted | exited
        self.errors: list[str] = []  # 진단기 자신의 오류(작업으로 올리지 않습니다)
        self.started_at = self.stopped_at = None
        self._report = None
        self._reset()

    # ----- 상태 -----
    def _reset(self) -> None:
        self.step = 0  # 끝난 스텝 수(주 옵티마이저 기준)
        self.phase = "idle"
        self.primary = None  # 스텝 경계를 정하는 옵티마이저(처음 스텝한 것)의 id
        self.last_boundary = None
        self.step_s: list[float] = []
        self.data_s: list[float] = []
        self.optimizer_s: list[float] = []
        self.closure_steps = 0  # 클로저를 넘긴 스텝(Lightning): 옵티마이저 시간만 떼어 잴 수 없음
        self.fetch_now = 0.0  # 지금 스텝에서 배치를 기다린 시간
        self.optimizer_now = 0.0
        self.optimizer_started = None
        self.fetching = False
        self.loaders: dict[int, dict] = {}
        # 로더는 작업이 끝나면 사라지므로, 다시 만들 재료(데이터셋과 설정)만 보고서를 쓸 때까지
        # 잡아 둡니다
        self.loader_recipes: dict[int, dict] = {}
        self.iter_loader: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.optimizers: dict[int, dict] = {}
        self.made_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.calls: probes.CallWatch | None = None
        self.call_steps = 0
        self.ops: probes.OpTimer | None = None
        self.op_summary: dict | None = None
        self.op_step_s: float | None = None
        self.depth = 0
        self.forward_handles: list = []
        self.data_parallel: Counter = Counter()
        self.eval_pending: list = []
        self.eval_autograd: Counter = Counter()
        self.debug = {
            "anomaly_steps": 0,
            "profiler_steps": 0,
            "anomaly_at": None,
            "profiler_at": None,
        }
        self.own_profiler = False
        self.patches = Patches()
        self.step_handles: list = []
        self.timed_window_started = None
        # ----- CUDA에서만 -----
        self.events: gpu.StepEvents | None = None  # 시간 창의 이벤트(창이 닫히면 읽고 놓습니다)
        self.gpu_step_s: list[float] | None = None
        self.gpu_data_s: list[float] | None = None
        self.sync_catch = None  # 호출 탐침 동안 켠 동기화 경고(컨텍스트)
        self.sync_caught: list = []  # 지금 스텝에서 잡은 것
        self.sync_records: list[list] = []  # 끝난 호출 탐침 스텝마다 잡은 것
        self.profiler = None
        self.profile: dict | None = None

    # ----- 켜고 끄기 -----
    def start(self) -> Doctor:
        self._install()
        self._enter_phase(self._phase_of(1))
        return self

    def _install(self) -> None:
        """옵티마이저 스텝 훅을 걸고 라이브러리(DataLoader 등)를 감쌉니다."""
        self.started_at = time.monotonic()
        optim = optimizer_module
        self.step_handles = [
            optim.register_optimizer_step_pre_hook(self._guarded(self._before_step)),
            optim.register_optimizer_step_post_hook(self._guarded(self._after_step)),
        ]
        self._patch_library()

    def start_timed(self) -> Doctor:
        """탐침 단계 없이 곧바로 시간 창에서 시작합니다.

        시간 창의 비용을 재는 벤치마크(snippets/doctor_overhead.py)가 씁니다: 창 안에서 도는 것은
        스텝 경계의 훅과 배치를 기다린 시간뿐입니다."""
        self.skip_steps = 0
        self.step = self.probe_step_count()  # 탐침 단계(calls, ops, profile)를 지난 것으로 둡니다
        self._install()
        self._enter_phase("timed")
        return self

    def stop(self) -> None:
        if self.phase == "stopped":
            return
        self._leave_phase(finished=False)
        self._read_events()  # 창 가운데서 끝난 작업: 끝난 스텝까지 읽습니다
        for handle in self.step_handles + self.forward_handles:
            handle.remove()
        self.step_handles, self.forward_handles = [], []
        self.patches.undo()
        self._confirm_eval_forwards()
        self.phase = "stopped"
        self.stopped_at = time.monotonic()

    def __enter__(self) -> Doctor:
        return self.start()

    def __exit__(self, kind, value, tb) -> bool:
        if kind is not None:
            self.outcome = "interrupted" if issubclass(kind, KeyboardInterrupt) else "raised"
        self.stop()
        return False

    def _guarded(self, function):
        """훅이 실패해도 작업은 멈추지 않습니다: 오류를 적고 진단만 멈춥니다."""

        @functools.wraps(function)
        def guarded(*args, **kwargs):
            if self.phase == "broken":
                return None
            try:
                return function(*args, **kwargs)
            except Exception as error:  # 진단기의 버그가 작업을 깨뜨리면 안 됩니다
                self.errors.append(f"{type(error).__name__}: {error}")
                self._leave_phase(finished=False)
                self.phase = "broken"
                return None

        return guarded

    def _quietly(self, what: str, function, *args):
        """CUDA 경로의 한 가지가 실패해도 다른 진단과 작업은 계속합니다: 오류만 적습니다."""
        try:
            return function(*args)
        except Exception as error:
            self.errors.append(f"{what}: {type(error).__name__}: {error}")
            return None

    # ----- 단계 -----
    def profile_steps(self) -> int:
        """프로파일러 한 스텝은 CUDA에서만 둡니다(CPU의 단계는 그대로입니다)."""
        return 1 if self.kind == "cuda" else 0

    def probe_step_count(self) -> int:
        """시간 창 앞의 탐침 스텝 수(호출, 연산, CUDA면 프로파일러)."""
        return self.probe_steps + 1 + self.profile_steps()

    def _phase_of(self, step: int) -> str:
        """step번째 스텝(1부터)의 단계."""
        edges = (
            ("warmup", self.skip_steps),
            ("calls", self.probe_steps),
            ("ops", 1),
            ("profile", self.profile_steps()),
            ("timed", self.steps),
        )
        end = 0
        for name, length in edges:
            end += length
            if step <= end:
                return name
        return "after"

    def _enter_phase(self, phase: str) -> None:
        self.phase = phase
        if phase != "timed" and not self.forward_handles:
            self._add_forward_hooks()
        if phase == "timed" and self.forward_handles:
            # 시간 창에서는 모듈마다 부르는 전역 훅도 빼 둡니다(오버헤드를 창 밖으로)
            for handle in self.forward_handles:
                handle.remove()
            self.forward_handles = []
        if phase == "calls":
            if self.calls is None:
                self.calls = probes.CallWatch(self.kind, clock=self.cuda.clock)
                self.calls.__enter__()
                self._catch_syncs()
            else:
                self.calls.new_step()
        if phase == "ops":
            self.ops = probes.OpTimer(
                self.kind, event_factory=self.cuda.event, synchronize=self.cuda.synchronize
            )
            self.ops.__enter__()
        if phase == "profile":
            self._quietly("프로파일러", self._start_profiler)
        self.fetch_now = 0.0
        self.optimizer_now = 0.0
        if phase == "timed" and self.timed_window_started is None:
            self.timed_window_started = time.perf_counter()
            if self.kind == "cuda":
                self.events = gpu.StepEvents(event_factory=self.cuda.event)

    def _leave_phase(self, finished: bool) -> None:
        """지금 스텝을 닫습니다. finished=False면 작업이 스텝 중간에 끝난 것입니다."""
        if self.calls is not None and self.phase == "calls":
            if finished:
                self.call_steps += 1
                self.sync_records.append(list(self.sync_caught))
            else:
                self.calls.drop_last_step()
            self.sync_caught.clear()
            if not finished or self._phase_of(self.step + 1) != "calls":
                self.calls.__exit__(None, None, None)
                self._release_syncs()
        if self.ops is not None and self.phase == "ops":
            self.ops.__exit__(None, None, None)
            if finished:
                self.ops.finish()
                self.op_summary = self.ops.summary()
            self.ops = None
        if self.profiler is not None and self.phase == "profile":
            self._quietly("프로파일러", self._stop_profiler, finished)

    def _before_step(self, optimizer, args, kwargs) -> None:
        self._remember_optimizer(optimizer)
        if self.primary is None:
            self.primary = id(optimizer)
        if id(optimizer) != self.primary:
            return
        closure = kwargs.get("closure") if kwargs else None
        if closure is None and len(args) > 1:
            closure = args[1]  # args[0]은 옵티마이저 자신입니다
        if closure is not None:
            self.closure_steps += 1
            self.optimizer_started = None
            return
        if self.ops is not None:
            self.ops.paused = True  # 연산 탐침은 순전파와 역전파만 봅니다(autocast가 바꾸는 곳)
        self.optimizer_started = time.perf_counter()

    def _after_step(self, optimizer, args, kwargs) -> None:
        if id(optimizer) != self.primary:
            return
        now = time.perf_counter()
        if self.optimizer_started is not None:
            self.optimizer_now = now - self.optimizer_started
        self._check_debug_tools()
        self.step += 1
        if self.phase == "timed" and self.last_boundary is not None:
            self.step_s.append(now - self.last_boundary)
            self.data_s.append(self.fetch_now)
            if self.optimizer_started is not None:
                self.optimizer_s.append(self.optimizer_now)
        if self.phase == "ops" and self.last_boundary is not None:
            self.op_step_s = now - self.last_boundary
        closing = self.phase
        self._leave_phase(finished=True)
        self.eval_pending = []  # 스텝 앞의 eval 모드 순전파는 학습의 일부였습니다
        self._enter_phase(self._phase_of(self.step + 1))
        self._mark_gpu_step(closing)
        self.last_boundary = time.perf_counter()

    def _check_debug_tools(self) -> None:
        if torch.is_anomaly_enabled():
            self.debug["anomaly_steps"] += 1
        if torch._C._autograd._profiler_enabled() and not self.own_profiler:
            self.debug["profiler_steps"] += 1

    # ----- CUDA에서만: 시간 창의 이벤트, 동기화 경고, 프로파일러 한 스텝 -----
    def _mark_gpu_step(self, closing: str) -> None:
        """시간 창의 스텝 경계에 이벤트를 찍고, 창이 닫히면 한 번 동기화해 읽습니다.

        closing은 방금 끝난 스텝의 단계입니다. 읽는 것은 다음 스텝의 시각을 재기 전입니다."""
        if self.events is None:
            return
        if closing == "timed" or self.phase == "timed":
            self._gpu_clock(self.events.boundary)
        if closing == "timed" and self.phase != "timed":
            self._read_events()

    def _gpu_clock(self, function, *args):
        """시간 창의 이벤트를 다룹니다. 한 번 실패하면 GPU 시계를 접습니다(호스트 시계는 그대로)."""
        try:
            return function(*args)
        except Exception as error:
            self.errors.append(f"CUDA 이벤트: {type(error).__name__}: {error}")
            self.events = None
            return None

    def _read_events(self) -> None:
        events = self.events
        if events is None:
            return
        result = self._gpu_clock(events.read, self.cuda.synchronize)
        self.events = None
        if result is not None:
            self.gpu_step_s, self.gpu_data_s = result

    def _open_fetch(self):
        """배치를 기다리기 시작할 때 이벤트를 찍습니다(시간 창에서만). 닫을 것을 돌려줍니다."""
        if self.phase != "timed" or self.events is None:
            return None
        return self._gpu_clock(self._enter_fetch, self.events)

    @staticmethod
    def _enter_fetch(events: gpu.StepEvents):
        around = events.fetch()
        around.__enter__()
        return around

    def _close_fetch(self, around) -> None:
        self._gpu_clock(around.__exit__, None, None, None)

    def _catch_syncs(self) -> None:
        """호출 탐침 동안 set_sync_debug_mode("warn")를 켜고 동기화 경고를 잡습니다."""
        if self.kind == "cuda":
            self._quietly("동기화 경고", self._open_syncs)

    def _open_syncs(self) -> None:
        catch = self.cuda.sync_warnings()
        self.sync_caught = catch.__enter__()
        self.sync_catch = catch

    def _release_syncs(self) -> None:
        catch, self.sync_catch = self.sync_catch, None
        self.sync_caught = []
        if catch is not None:
            self._quietly("동기화 경고", catch.__exit__, None, None, None)

    def _start_profiler(self) -> None:
        """이 스텝 하나만 프로파일러로 기록합니다. 작업이 켠 프로파일러가 있으면 두지 않습니다."""
        if torch._C._autograd._profiler_enabled():
            return
        profiler = self.cuda.profiler()
        self.own_profiler = True  # 진단기가 켠 프로파일러는 "켜 둔 디버깅 도구"가 아닙니다
        try:
            with quiet_profiler():
                profiler.start()
        except Exception:
            self.own_profiler = False
            raise
        self.profiler = profiler

    def _stop_profiler(self, finished: bool) -> None:
        profiler, self.profiler = self.profiler, None
        try:
            with quiet_profiler():
                recorded = profiler.stop()
                if finished:
                    events = gpu.profiler_events(recorded)
        finally:
            self.own_profiler = False
        if finished:
            self.profile = gpu.summary_of_step(events)

    def _cuda_syncs(self) -> list[dict] | None:
        """호출 탐침 스텝에서 잡은 동기화 경고: 바깥에서 잡은 것과 호출 탐침이 옮겨 적은 것."""
        if self.kind != "cuda":
            return None
        steps = self.call_steps
        records = [record for step in self.sync_records[:steps] for record in step]
        if self.calls is not None:
            records += [record for step in self.calls.sync_records[:steps] for record in step]
        return gpu.sync_sites(records, steps)

    # ----- 옵티마이저 -----
    def _remember_optimizer(self, optimizer) -> None:
        key = id(optimizer)
        if key in self.optimizers:
            return
        params = [p for group in optimizer.param_groups for p in group["params"]]
        devices = sorted({p.device.type for p in params})
        site = self.made_at.get(optimizer) or where.reader_frame(2)
        self.optimizers[key] = {
            "class": type(optimizer).__name__,
            "module": type(optimizer).__module__,
            "fused": optimizer.defaults.get("fused"),
            "foreach": optimizer.defaults.get("foreach"),
            "has_fused": "fused" in optimizer.defaults,
            "devices": devices,
            "params": len(params),
            "file": site[0] if site else None,
            "line": site[1] if site else None,
        }

    # ----- 라이브러리 감싸기 -----
    def _patch_library(self) -> None:  # noqa: C901 (감싸는 라이브러리 함수마다 한 갈래)
        doctor = self
        base_iter = dataloader_module._BaseDataLoaderIter

        def make_init(original):
            def __init__(iterator, loader, *args, **kwargs):
                original(iterator, loader, *args, **kwargs)
                doctor._guarded(doctor._remember_loader)(iterator, loader)

            return __init__

        def make_next(original):
            def __next__(iterator):
                doctor._pause_probes(True)
                started = time.perf_counter()
                waiting = doctor._open_fetch() if doctor.events is not None else None
                try:
                    return original(iterator)
                finally:
                    doctor._count_batch(iterator, time.perf_counter() - started)
                    if waiting is not None:
                        doctor._close_fetch(waiting)
                    doctor._pause_probes(False)

            return __next__

        self.patches.wrap(base_iter, "__init__", make_init)
        self.patches.wrap(base_iter, "__next__", make_next)

        def remember_where_made(original):
            def __init__(optimizer, *args, **kwargs):
                original(optimizer, *args, **kwargs)
                site = where.reader_frame(2)
                if site is not None:
                    doctor.made_at[optimizer] = site

            return __init__

        self.patches.wrap(torch.optim.Optimizer, "__init__", remember_where_made)
        # 로더를 만든 줄이 고칠 곳입니다(num_workers, pin_memory를 거기서 줍니다)
        self.patches.wrap(torch.utils.data.DataLoader, "__init__", remember_where_made)

        def remember_site(key):
            def make(original):
                def wrapped(*args, **kwargs):
                    site = where.reader_frame(2)
                    if site is not None and not doctor.own_profiler:
                        doctor.debug[key] = list(site)
                    return original(*args, **kwargs)

                return wrapped

            return make

        anomaly = torch.autograd.anomaly_mode
        self.patches.wrap(anomaly.set_detect_anomaly, "__init__", remember_site("anomaly_at"))
        self.patches.wrap(anomaly.detect_anomaly, "__enter__", remember_site("anomaly_at"))
        self.patches.wrap(
            torch.autograd.profiler.profile, "__enter__", remember_site("profiler_at")
        )
        kineto = torch.profiler.profiler._KinetoProfile
        self.patches.wrap(kineto, "start", remember_site("profiler_at"))

    def _pause_probes(self, paused: bool) -> None:
        self.fetching = paused
        for probe in (self.calls, self.ops):
            if probe is not None:
                probe.paused = paused

    def _remember_loader(self, iterator, loader) -> None:
        key = id(loader)
        self.iter_loader[iterator] = key
        if key in self.loaders:
            return
        self.loader_recipes[key] = recipe_of(loader)
        self.loaders[key] = {
            "num_workers": loader.num_workers,
            "pin_memory": bool(loader.pin_memory),
            "persistent_workers": bool(loader.persistent_workers),
            "prefetch_factor": loader.prefetch_factor,
            "batch_size": loader.batch_size,
            "iterable": isinstance(loader.dataset, torch.utils.data.IterableDataset),
            "dataset": type(loader.dataset).__name__,
            "batches": 0,
            "window_batches": 0,
            "window_s": 0.0,
            "file": None,
            "line": None,
        }
        site = self.made_at.get(loader)
        if site is not None:
            self.loaders[key]["file"], self.loaders[key]["line"] = site

    def _count_batch(self, iterator, seconds: float) -> None:
        if self.phase in ("stopped", "broken"):
            return
        key = self.iter_loader.get(iterator)
        info = self.loaders.get(key)
        if info is None:
            return
        if info["file"] is None:
            site = where.reader_frame(2)
            if site is not None:
                info["file"], info["line"] = site
        info["batches"] += 1
        if self.phase == "timed":
            self.fetch_now += seconds
            info["window_batches"] += 1
            info["window_s"] += seconds

    # ----- 모듈 순전파(DataParallel, autograd를 기록하는 평가) -----
    def _add_forward_hooks(self) -> None:
        module = torch.nn.modules.module
        self.forward_handles = [
            module.register_module_forward_pre_hook(self._guarded(self._before_forward)),
            module.register_module_forward_hook(
                self._guarded(self._after_forward), always_call=True
            ),
        ]

    def _before_forward(self, module, args) -> None:
        self.depth += 1
        if isinstance(module, torch.nn.DataParallel):
            site = where.reader_frame(2)
            if site is not None:
                self.data_parallel[site] += 1

    def _after_forward(self, module, args, output) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth != 0 or self.fetching:
            return  # 맨 바깥 모듈의 순전파만 봅니다
        if module.training:
            self._confirm_eval_forwards()
            return
        if torch.is_grad_enabled() and records_autograd(output):
            site = where.reader_frame(2)
            if site is not None:
                self.eval_pending.append(site)

    def _confirm_eval_forwards(self) -> None:
        """스텝 없이 지나간 eval 모드 순전파: 평가였습니다."""
        for site in self.eval_pending:
            self.eval_autograd[site] += 1
        self.eval_pending = []

    # ----- 결과 -----
    def evidence(self) -> dict:
        """규칙(torchdoctor/rules.py)이 읽는 증거: torch 객체 없이 JSON으로 쓸 수 있는 값만."""
        calls = self.calls
        per_step = calls_per_step(calls, self.call_steps) if calls else {}
        loaders = sorted(self.loaders.values(), key=lambda info: -info["window_batches"])
        return {
            "device": self.kind,
            "gpu": gpu_info(),
            "torch": torch.__version__,
            "rank": rank_info(),
            "script": self.script,
            "outcome": self.outcome,
            "skip_steps": self.skip_steps,
            "window_steps": self.steps,
            "probe_steps": self.probe_steps,
            "steps_seen": self.step,
            "call_steps": self.call_steps,
            "step_s": list(self.step_s),
            "data_s": list(self.data_s),
            # CUDA: 같은 스텝을 CUDA 이벤트로(GPU 시계), 데이터는 배치를 기다리며 GPU가 쉰 시간
            "gpu_step_s": None if self.gpu_step_s is None else list(self.gpu_step_s),
            "gpu_data_s": None if self.gpu_data_s is None else list(self.gpu_data_s),
            "optimizer_s": list(self.optimizer_s),
            "closure_steps": self.closure_steps,
            "loader": loaders[0] if loaders else None,
            "loaders": len(loaders),
            **per_step,
            "cuda_syncs": self._cuda_syncs(),
            "ops": self.op_summary,
            "op_step_s": self.op_step_s,
            "profile": self.profile,
            "optimizers": list(self.optimizers.values()),
            "data_parallel": sites(self.data_parallel),
            "eval_autograd": sites(self.eval_autograd),
            "debug": dict(self.debug),
            "flags": {
                "tf32_matmul": tf32_matmul_on() if self.kind == "cuda" else None,
                "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            },
            "errors": list(self.errors),
        }

    def primary_loader_recipe(self) -> dict | None:
        """시간 창에서 배치를 가장 많이 낸 로더를 다시 만들 재료(없으면 None)."""
        if not self.loaders:
            return None
        key = max(self.loaders, key=lambda k: self.loaders[k]["window_batches"])
        return self.loader_recipes.get(key)

    def release(self) -> None:
        """보고서를 쓴 뒤: 잡아 둔 데이터셋을 놓습니다."""
        self.loader_recipes = {}

    def report(self):
        """보고서(torchdoctor.report.Report). 아직 만들지 않았으면 지금 만듭니다."""
        if self._report is None:
            from torchdoctor import diagnose

            self._report = diagnose.diagnose(self)
        return self._report


@contextlib.contextmanager
def quiet_profiler():
    """프로파일러를 켜고 끄는 동안: 그 경고와 kineto가 표준 오류에 쓰는 줄을 작업의 출력에 섞지
    않습니다(작업이 도는 동안 진단기는 아무것도 찍지 않습니다)."""
    with warnings.catch_warnings(), gpu.native_stderr_quiet():
        warnings.simplefilter("ignore")
        yield


def recipe_of(loader) -> dict:
    """DataLoader를 다시 만들 재료.

    샘플러와 generator는 담지 않습니다(작업의 데이터 순서를 지킵니다)."""
    return {
        "dataset": loader.dataset,
        "batch_size": loader.batch_size,
        "drop_last": loader.drop_last,
        "batch_sampler": None if loader.batch_size is not None else loader.batch_sampler,
        "collate_fn": loader.collate_fn,
        "worker_init_fn": loader.worker_init_fn,
        "multiprocessing_context": loader.multiprocessing_context,
        "timeout": loader.timeout,
        "num_workers": loader.num_workers,
        "pin_memory": loader.pin_memory,
        "prefetch_factor": loader.prefetch_factor,
    }


def records_autograd(output) -> bool:
    if isinstance(output, torch.Tensor):
        return output.requires_grad
    if isinstance(output, list | tuple):
        return any(records_autograd(item) for item in output)
    if isinstance(output, dict):
        return any(records_autograd(item) for item in output.values())
    return False


def sites(counter: Counter) -> list[dict]:
    return [{"file": f, "line": n, "count": c} for (f, n), c in counter.most_common()]


def calls_per_step(calls: probes.CallWatch, steps: int) -> dict:
    """호출 탐침의 셈: 탐침 스텝마다 빠짐없이 나온 위치만 '스텝마다'로 셉니다."""

    def every_step(counters: list, seconds: list | None = None) -> list[dict]:
        counters = counters[:steps]
        if not counters:
            return []
        common = set(counters[0])
        for counter in counters[1:]:
            common &= set(counter)
        rows = []
        for key in common:
            total = sum(counter[key] for counter in counters)
            what, filename, line = key if len(key) == 3 else (None, *key)
            row = {"what": what, "file": filename, "line": line, "per_step": total / len(counters)}
            if seconds is not None:  # CUDA: 이 줄의 동기화 호출 안에서 보낸 시간
                row["seconds_per_step"] = sum(c[key] for c in seconds[:steps]) / len(counters)
            rows.append(row)
        return sorted(rows, key=lambda row: (-row["per_step"], row["file"], row["line"]))

    timed = calls.sync_seconds if calls.device_kind == "cuda" else None
    return {
        "syncs": every_step(calls.syncs, timed),
        "library_syncs_per_step": calls.library_syncs / steps if steps else 0,
        "moves": every_step(calls.moves),
        "attention": every_step(calls.attention),
    }


def watch(**options) -> Doctor:
    """노트북이나 `trainer.fit` 둘레에서 씁니다.

    `with torchdoctor.watch() as doctor: ...` 뒤 doctor.report()."""
    return Doctor(**options)
