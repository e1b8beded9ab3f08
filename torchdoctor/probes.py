"""측정을 흔드는 관찰(탐침): 시간을 재는 스텝 밖, 따로 떼어 둔 스텝에서만 켭니다.

- CallWatch(TorchFunctionMode): 텐서 메서드와 torch 함수 호출을 봅니다. 호스트 동기화 호출,
  호스트에서 만든 뒤 옮기는 텐서, 두 행렬 곱 사이의 softmax(손으로 쓴 어텐션). CUDA에서는
  동기화 호출의 시간을 재고, 호출 안에서 난 동기화 경고(set_sync_debug_mode)를 부른 줄로
  옮겨 적습니다.
- OpTimer(TorchDispatchMode): aten 연산마다 시간과 dtype을 적습니다. fp32 행렬 곱의 몫,
  합성곱의 메모리 형식, 연산 수(CUDA에서 실행 시간이 짧은 커널이 많은지).
둘 다 받은 함수를 그대로 부르므로 계산 결과는 바뀌지 않습니다.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections import Counter

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchdoctor import gpu, where

TORCH_DIR = os.path.dirname(os.path.realpath(torch.__file__))
T = torch.Tensor

# GPU에서라면 호스트가 장치를 기다리게 하는 호출과 보고서에 쓰는 이름
SYNC_CALLS = {
    T.item: "`.item()`",
    T.tolist: "`.tolist()`",
    T.cpu: "`.cpu()`",
    T.numpy: "`.numpy()`",
    T.__bool__: "`bool(텐서)`/`if 텐서`",
    T.__float__: "`float(텐서)`",
    T.__int__: "`int(텐서)`",
    T.__repr__: "텐서 출력(`print`)",
    T.__format__: "텐서 출력(f-문자열)",
}
FACTORIES = {
    torch.rand,
    torch.randn,
    torch.randint,
    torch.zeros,
    torch.ones,
    torch.empty,
    torch.full,
    torch.arange,
    torch.tensor,
    torch.eye,
    torch.linspace,
    torch.as_tensor,
}
MOVES = {T.to, T.cuda}
MATMULS = {torch.matmul, T.matmul, T.__matmul__, torch.bmm, T.bmm, torch.einsum}
SOFTMAXES = {torch.softmax, T.softmax, torch.nn.functional.softmax}
# 어텐션 점수에 흔히 하는 원소별 연산(크기 조정, 마스크, 드롭아웃): 점수의 흐름을 이어 갑니다.
SCORE_OPS = {
    T.__truediv__,
    T.__mul__,
    T.__add__,
    T.__sub__,
    T.div,
    T.mul,
    T.add,
    T.masked_fill,
    T.masked_fill_,
    torch.where,
    torch.nn.functional.dropout,
    T.div_,
    T.mul_,
    T.add_,
    T.float,
    T.to,
    T.type_as,
}


# torch가 텐서 메서드를 모드로 넘기는 길목의 파일: 이 프레임들을 건너뛴 곳이 부른 쪽입니다.
PLUMBING = tuple(
    os.path.join(TORCH_DIR, name) for name in ("overrides.py", "_tensor.py", "_tensor_str.py")
)


def direct_caller() -> tuple[str, int] | None:
    """텐서 메서드를 직접 부른 프레임. 독자의 파일이면 (파일, 줄), 라이브러리(torch.optim, Lightning
    등)면 None: 라이브러리 안의 호출은 독자가 그 줄에서 고칠 수 없습니다."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(where.HERE) or filename in PLUMBING):
            if where.is_reader_file(filename):
                return filename, frame.f_lineno
            return None
        frame = frame.f_back
    return None


def names_device(args: tuple, kwargs: dict) -> bool:
    """`.to(...)`의 인자가 장치를 가리키는지.

    dtype만 바꾸는 `.to(torch.float16)`은 옮기기가 아닙니다."""
    candidates = list(args) + [kwargs.get("device")]
    for value in candidates:
        if isinstance(value, torch.device | int) and not isinstance(value, bool):
            return True
        if isinstance(value, str):
            try:
                torch.device(value)
            except RuntimeError:
                continue
            return True
    return False


class CallWatch(TorchFunctionMode):
    """한 스텝 동안의 호출을 셉니다. step_counts는 스텝마다의 Counter입니다."""

    def __init__(self, device_kind: str, clock=time.perf_counter):
        super().__init__()
        self.device_kind = device_kind
        self.clock = clock  # CUDA에서만 씁니다: 동기화 호출에서 호스트가 기다린 시간
        self.paused = False  # 다음 배치를 가져오는 동안(데이터셋의 일)은 보지 않습니다
        self.syncs: list[Counter] = []
        self.sync_seconds: list[Counter] = []  # CUDA: 스텝마다 (호출, 파일, 줄) → 초
        self.sync_records: list[list] = []  # CUDA: 스텝마다 호출 안에서 난 동기화 경고
        self.library_syncs = 0
        self.moves: list[Counter] = []
        self.attention: list[Counter] = []
        self.new_step()

    def new_step(self) -> None:
        self.syncs.append(Counter())
        self.sync_seconds.append(Counter())
        self.sync_records.append([])
        self.moves.append(Counter())
        self.attention.append(Counter())
        # 이 스텝에서 본 텐서만 잡아 둡니다(스텝이 끝나면 놓습니다)
        self.host_made: dict[int, torch.Tensor] = {}
        self.scores: dict[int, torch.Tensor] = {}
        self.probs: dict[int, torch.Tensor] = {}

    def drop_last_step(self) -> None:
        """끝나지 않은 스텝(작업이 중간에 끝남)은 셈에서 뺍니다."""
        per_step = (self.syncs, self.sync_seconds, self.sync_records, self.moves, self.attention)
        for counts in per_step:
            counts.pop()
        self.host_made, self.scores, self.probs = {}, {}, {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.paused:
            return func(*args, **kwargs)
        # 탐침 스텝에서 난 경고는 작업이 이미 워밍업 스텝에서 낸 것입니다. 위치만 이 파일로 바뀐
        # 같은 경고가 한 번 더 찍히지 않도록 버립니다(CUDA의 동기화 경고는 부른 줄로 옮겨 적습니다).
        cuda = self.device_kind == "cuda"
        started = self.clock() if cuda else None
        with warnings.catch_warnings(record=True) as caught:
            result = func(*args, **kwargs)
        seconds = self.clock() - started if cuda else None
        try:
            self.look(func, args, kwargs, result, seconds)
            if cuda and caught:
                self.keep_sync_warnings(caught, seconds)
        except Exception:  # 관찰이 실패해도 작업은 계속합니다
            pass
        return result

    def keep_sync_warnings(self, caught, seconds: float) -> None:
        """CUDA: 이 호출 안에서 난 동기화 경고를 부른 줄로 옮겨 적습니다.

        경고가 가리키는 곳은 이 파일(func를 부른 줄)이라 그대로는 독자의 줄을 알 수 없습니다."""
        messages = [str(w.message) for w in caught if gpu.is_sync_warning(str(w.message))]
        if not messages:
            return
        site = direct_caller()
        if site is None:
            return  # 라이브러리 안의 동기화: 독자가 그 줄에서 고칠 수 없습니다
        share = seconds / len(messages)
        for message in messages:
            self.sync_records[-1].append(gpu.SyncRecord(message, site[0], site[1], share))

    def look(self, func, args, kwargs, result, seconds=None) -> None:  # noqa: C901 (연산 종류마다)
        if func in SYNC_CALLS:
            tensor = args[0] if args else None
            if self.device_kind == "cuda" and not (isinstance(tensor, T) and tensor.is_cuda):
                return  # CUDA 작업에서 호스트 텐서를 읽는 것은 동기화가 아닙니다
            site = direct_caller()
            if site is None:
                self.library_syncs += 1
                return
            key = (SYNC_CALLS[func], *site)
            self.syncs[-1][key] += 1
            if seconds is not None:  # CUDA에서만 잽니다: 호스트가 GPU를 기다린 시간
                self.sync_seconds[-1][key] += seconds
            return
        if func in FACTORIES:
            if "device" not in kwargs and isinstance(result, T) and result.device.type == "cpu":
                self.host_made[id(result)] = result
            return
        if func in MOVES and args and id(args[0]) in self.host_made:
            if func is T.cuda or names_device(args[1:], kwargs):
                site = direct_caller()
                if site is not None:
                    self.moves[-1][site] += 1
            return
        tensors = [a for a in args if isinstance(a, T)]
        if func in MATMULS:
            if any(id(a) in self.probs for a in tensors):
                site = where.reader_frame(2)
                if site is not None:
                    self.attention[-1][site] += 1
            elif isinstance(result, T) and result.dim() >= 3:
                self.scores[id(result)] = result
            return
        if func in SOFTMAXES:
            if tensors and id(tensors[0]) in self.scores and isinstance(result, T):
                self.probs[id(result)] = result
            return
        if func in SCORE_OPS and isinstance(result, T):
            if any(id(a) in self.scores for a in tensors):
                self.scores[id(result)] = result
            elif any(id(a) in self.probs for a in tensors):
                self.probs[id(result)] = result


def cuda_event():
    return torch.cuda.Event(enable_timing=True)


MATMUL_OPS = {"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten._scaled_mm"}
CONV_OPS = {"aten.convolution", "aten.cudnn_convolution", "aten.mkldnn_convolution"}


class OpTimer(TorchDispatchMode):
    """한 스텝의 aten 연산마다 걸린 시간(CPU는 벽시계, CUDA는 이벤트)과 dtype을 적습니다."""

    def __init__(self, device_kind: str, event_factory=None, synchronize=None):
        super().__init__()
        self.cuda = device_kind == "cuda"
        self.event = event_factory or cuda_event  # 시험은 가짜 이벤트를 넘깁니다
        self.synchronize = synchronize or torch.cuda.synchronize
        self.paused = False
        self.ops: Counter = Counter()  # 연산 이름 → 호출 수
        self.seconds: Counter = Counter()  # 연산 이름 → 초
        self.matmul_s = {"fp32": 0.0, "low": 0.0, "other": 0.0}
        self.matmul_sites: Counter = Counter()  # fp32 행렬 곱의 (파일, 줄) → 초
        self.conv = {"count": 0, "nchw": 0, "shapes": set()}
        self.pending: list = []  # CUDA 이벤트(스텝 끝에 한 번 동기화하고 읽습니다)
        self.op_durations: list[float] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.paused:
            return func(*args, **kwargs)
        name = str(func.overloadpacket)
        if self.cuda:
            start, end = self.event(), self.event()
            start.record()
            result = func(*args, **kwargs)
            end.record()
            self.pending.append((name, start, end, args))
        else:
            started = time.perf_counter()
            result = func(*args, **kwargs)
            self.add(name, time.perf_counter() - started, args)
        return result

    def add(self, name: str, seconds: float, args) -> None:
        self.ops[name] += 1
        self.seconds[name] += seconds
        self.op_durations.append(seconds)
        if name in MATMUL_OPS:
            dtype = next((a.dtype for a in args if isinstance(a, T)), None)
            kind = "fp32" if dtype == torch.float32 else "low" if dtype in LOW else "other"
            self.matmul_s[kind] += seconds
            # 역전파의 연산은 독자의 `loss.backward()` 줄을 가리키므로 순전파의 위치만 적습니다
            if kind == "fp32" and torch._C._current_autograd_node() is None:
                site = where.reader_frame(3)
                if site is not None:
                    self.matmul_sites[site] += seconds
        elif name in CONV_OPS:
            first = args[0] if args and isinstance(args[0], T) else None
            if first is not None and first.dim() == 4:
                self.conv["count"] += 1
                if not first.is_contiguous(memory_format=torch.channels_last):
                    self.conv["nchw"] += 1
                self.conv["shapes"].add(tuple(first.shape))

    def finish(self) -> None:
        """CUDA 이벤트를 읽습니다(탐침 스텝 끝에 한 번 동기화)."""
        if not self.pending:
            return
        self.synchronize()
        for name, start, end, args in self.pending:
            self.add(name, start.elapsed_time(end) / 1000, args)
        self.pending = []

    def summary(self) -> dict:
        total = sum(self.seconds.values())
        return {
            "ops": sum(self.ops.values()),
            "op_s": total,
            "matmul_s": dict(self.matmul_s),
            "matmul_sites": [
                {"file": f, "line": n, "seconds": s}
                for (f, n), s in self.matmul_sites.most_common(3)
            ],
            "conv": {
                "count": self.conv["count"],
                "nchw": self.conv["nchw"],
                "shapes": len(self.conv["shapes"]),
            },
            "median_op_s": sorted(self.op_durations)[len(self.op_durations) // 2]
            if self.op_durations
            else None,
        }


LOW = {torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2}
