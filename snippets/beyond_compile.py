"""더 나아가기 1: `torch.compile`로 모델을 컴파일합니다.

같은 학습 한 스텝(순전파, 손실, 역전파)을 그대로(eager) 돌리는 것과 컴파일한 모델로 돌리는 것을
비교합니다. 그래프가 끊기는 곳(graph break)과 다시 컴파일(recompile)되는 횟수를 세고, 첫 호출에
드는 컴파일 시간과 캐시 폴더(TORCHINDUCTOR_CACHE_DIR)가 그 시간을 얼마나 줄이는지 봅니다.

실행: `python snippets/beyond_compile.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import contextlib
import logging
import os
import shutil
import sysconfig
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch._dynamo.utils import counters

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:model]
class Block(nn.Module):
    """LayerNorm → Linear → GELU → Linear에 잔차 연결. 원소별 연산이 많아 융합할 거리가 있습니다."""

    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, 4 * d_model)
        self.down = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class TinyMLP(nn.Module):
    def __init__(self, d_model=128, num_layers=2, num_classes=10):
        super().__init__()
        self.body = nn.Sequential(*[Block(d_model) for _ in range(num_layers)])
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def make_inputs(device, batch_size=64, d_model=128, num_layers=2, num_classes=10, seed=0):
    """같은 seed면 같은 가중치와 같은 배치(x, y)를 장치에 만듭니다."""
    torch.manual_seed(seed)
    model = TinyMLP(d_model, num_layers, num_classes).to(device)
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch_size, d_model, device=device, generator=g)
    y = torch.randint(0, num_classes, (batch_size,), device=device, generator=g)
    return model, x, y


# --8<-- [end:model]


# --8<-- [start:slow]
def train_step(model, x, y):
    """순전파, 손실, 역전파 한 번입니다. 변화도는 model의 .grad에 남습니다.

    eager 모델을 넘기면 연산을 하나씩 실행합니다(느린 방식).
    """
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach()  # .item()으로 읽지 않습니다: 읽으면 CPU가 GPU를 기다립니다.


# --8<-- [end:slow]


# --8<-- [start:fast]
def compile_model(model, mode=None, backend="inductor"):
    """모델을 컴파일합니다(빠른 방식). 가중치는 원래 모델과 같은 텐서를 함께 씁니다.

    mode: None(기본), "reduce-overhead"(CUDA 그래프), "max-autotune"(커널을 더 오래 고름).
    실제 컴파일은 첫 호출 때 일어납니다. train_step(compile_model(model), x, y)처럼 씁니다.
    """
    return torch.compile(model, mode=mode, backend=backend)


# --8<-- [end:fast]


# --8<-- [start:graph_break]
class LoggingMLP(TinyMLP):
    """순전파 안에서 로그용 값을 .item()으로 읽습니다. 컴파일하면 그래프가 여기서 끊깁니다."""

    def forward(self, x):
        h = self.body(x)
        self.last_norm = h.norm().item()  # 파이썬 float가 필요해 그래프를 멈추고 값을 읽습니다.
        return self.head(h)


class TensorLoggingMLP(TinyMLP):
    """같은 값을 텐서로 남겨 둡니다. 읽는 일은 필요할 때 그래프 밖에서 합니다."""

    def forward(self, x):
        h = self.body(x)
        self.last_norm = h.norm().detach()
        return self.head(h)


def count_graph_breaks(model, x):
    """torch._dynamo.explain으로 그래프 수, 끊긴 횟수, 이유를 셉니다(코드는 만들지 않습니다)."""
    torch._dynamo.reset()
    report = torch._dynamo.explain(model)(x)
    reasons = [str(b.reason).splitlines()[0] for b in report.break_reasons]
    return report.graph_count, report.graph_break_count, reasons


# --8<-- [end:graph_break]


# --8<-- [start:recompile]
def make_batches(sizes, d_model=128, num_classes=10, device="cpu", seed=0):
    """배치 크기 목록대로 (x, y)를 만듭니다. [64, 64, 40]은 drop_last=False의 마지막 배치입니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    return [
        (
            torch.randn(n, d_model, device=device, generator=g),
            torch.randint(0, num_classes, (n,), device=device, generator=g),
        )
        for n in sizes
    ]


def count_compiles(model, batches, backend="inductor", dynamic=None):
    """새로 컴파일한 모델로 배치들을 학습 스텝에 넣고, 그래프를 몇 번 만들었는지 셉니다.

    1이면 처음 한 번만 컴파일한 것이고, 2 이상이면 모양이 바뀌어 다시 컴파일(recompile)한 것입니다.
    """
    torch._dynamo.reset()  # 이전 컴파일 결과를 지워 처음부터 셉니다.
    counters.clear()
    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
    for x, y in batches:
        train_step(compiled, x, y)
    return counters["stats"]["unique_graphs"]


# --8<-- [end:recompile]


# --8<-- [start:cache]
def first_call_seconds(compiled, x, y):
    """컴파일된 모델의 첫 학습 스텝 시간(컴파일 포함)을 잽니다."""
    if x.is_cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    train_step(compiled, x, y)
    if x.is_cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def inductor_cache_dir():
    """Inductor가 만든 코드를 저장하는 폴더. 지정하지 않으면 /tmp 아래(재부팅하면 사라짐)입니다."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return cache_dir()


def fx_graph_cache_counts():
    """이 프로세스에서 Inductor 캐시를 찾은 횟수(hit)와 못 찾아 새로 만든 횟수(miss)입니다."""
    return counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"]


# --8<-- [end:cache]


# --8<-- [start:compiler_check]
def missing_for_inductor_on_cpu():
    """CPU에서 Inductor가 C++ 코드를 컴파일하는 데 필요한데 없는 것의 목록입니다(다 있으면 [])."""
    missing = []
    compiler = os.environ.get("CXX", "g++")
    if shutil.which(compiler) is None:
        missing.append(f"C++ 컴파일러({compiler})")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        missing.append("Python 헤더(Python.h, Debian/Ubuntu의 python3-dev)")
    return missing


# --8<-- [end:compiler_check]


# --8<-- [start:warnings]
class _Collect(logging.Filter):
    """경고 이상의 로그는 화면에 찍지 않고 모읍니다. 낮은 로그(TORCH_LOGS)는 그대로 둡니다."""

    def __init__(self):
        super().__init__()
        self.records = []

    def filter(self, record):
        if record.levelno >= logging.WARNING:
            self.records.append(record)
            return False
        return True


@contextlib.contextmanager
def compiler_warnings(names=("torch", "torch._dynamo", "torch._inductor")):
    """torch.compile이 로그로 바로 찍는 경고(그래프 끊김 안내 등)를 모아 두었다가 돌려줍니다.

    torch는 이 로거들에 자기 핸들러를 달아 stderr에 씁니다. 그 핸들러에 필터를 잠깐 붙입니다.
    """
    collect = _Collect()
    handlers = [h for name in names for h in logging.getLogger(name).handlers]
    for handler in handlers:
        handler.addFilter(collect)
    try:
        yield collect.records
    finally:
        for handler in handlers:
            handler.removeFilter(collect)


def summarize(records):
    """모은 경고를 한 줄씩 요약합니다(첫 줄만, 같은 것은 한 번만)."""
    firsts = dict.fromkeys(
        record.getMessage().strip().splitlines()[0].split(", consider")[0] for record in records
    )
    for first in firsts:
        print(f"  컴파일러 경고(모아 둔 것): {first}")


# --8<-- [end:warnings]


def max_grad_difference(a, b):
    """두 모델의 변화도 차이 가운데 가장 큰 값입니다."""
    pairs = zip(a.parameters(), b.parameters(), strict=True)
    return max((p.grad - q.grad).abs().max().item() for p, q in pairs)


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}, torch {torch.__version__}")

    # 1) 그래프 끊김: 코드를 만들지 않고 추적만 하므로 빠릅니다.
    model, x, y = make_inputs(device)
    with compiler_warnings() as warnings:
        for cls in (LoggingMLP, TensorLoggingMLP):
            graphs, breaks, reasons = count_graph_breaks(cls().to(device), x)
            why = f" (이유: {reasons[0]})" if reasons else ""
            print(f"{cls.__name__}: 그래프 {graphs}개, 끊김 {breaks}번{why}")
    summarize(warnings)

    # 2) 다시 컴파일: 마지막 배치만 작은 경우(drop_last=False)와 모두 같은 경우(drop_last=True).
    # 세는 것이 목적이라 코드를 만들지 않는 backend="eager"로 추적만 합니다.
    with compiler_warnings() as warnings:
        for label, sizes in (("drop_last=False", [64, 64, 40]), ("drop_last=True", [64, 64, 64])):
            compiles = count_compiles(model, make_batches(sizes, device=device), backend="eager")
            print(f"배치 크기 {sizes} ({label}): 그래프를 {compiles}번 만들었습니다")
    summarize(warnings)

    # 3) 실제 컴파일(Inductor): 첫 호출 시간, 캐시, 평소 스텝 시간.
    if device.type == "cpu" and missing_for_inductor_on_cpu():
        print(
            f"Inductor로 컴파일할 수 없습니다. 없는 것: {', '.join(missing_for_inductor_on_cpu())}"
        )
        print(
            "설치하지 않고 torch.compile(model)을 부르면 첫 호출에서 InvalidCxxCompiler로 멈춥니다."
        )
        return
    print(f"Inductor 캐시 폴더: {inductor_cache_dir()}")
    print(
        "Inductor로 컴파일합니다. 캐시가 비어 있으면 코드를 새로 만들어 컴파일해 오래 걸립니다..."
    )
    torch._dynamo.reset()
    counters.clear()
    compiled = compile_model(model)
    with compiler_warnings() as warnings:
        first_s = first_call_seconds(compiled, x, y)
    summarize(warnings)
    hits, misses = fx_graph_cache_counts()
    state = "캐시에서 읽음(따뜻한 캐시)" if hits and not misses else "새로 컴파일(차가운 캐시)"
    print(f"첫 호출(컴파일 포함): {first_s:.1f} s, {state}: 캐시 hit {hits}, miss {misses}")
    reference, _, _ = make_inputs(device)
    train_step(reference, x, y)
    print(f"eager와 변화도 차이(최대): {max_grad_difference(model, reference):.2e}")
    print("평소 스텝의 시간을 잽니다(eager와 컴파일한 모델)...")
    times = {}
    for label, net in (("eager", reference), ("컴파일", compiled)):
        timer = Timer("f(m, x, y)", globals={"f": train_step, "m": net, "x": x, "y": y})
        times[label] = timer.blocked_autorange(min_run_time=0.3).median
    eager_s, compiled_s = times["eager"], times["컴파일"]
    print(
        f"평소 스텝: eager {eager_s * 1e3:.2f} ms, 컴파일 {compiled_s * 1e3:.2f} ms "
        f"({eager_s / compiled_s:.2f}배)"
    )
    if eager_s > compiled_s:
        print(f"컴파일 시간을 되찾는 데 필요한 스텝 수: 약 {first_s / (eager_s - compiled_s):,.0f}")
    else:
        print("이 크기에서는 컴파일한 스텝이 빠르지 않습니다. 컴파일이 언제나 이기지는 않습니다.")
    print("같은 명령을 새 프로세스로 한 번 더 실행하면 채워진 캐시 덕분에 첫 호출이 짧아집니다.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 1: torch.compile로 컴파일하기"))
