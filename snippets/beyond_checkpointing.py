"""더 나아가기 8: 활성화 체크포인팅(activation checkpointing)으로 메모리를 아끼고 시간을 냅니다.

블록을 쌓은 모델의 학습 한 스텝을 체크포인팅 없이, 그리고 블록마다 체크포인팅해서 돌립니다.
역전파를 위해 저장한 활성값의 바이트는 saved_tensors_hooks로 정확히 세고, GPU에서는 최고
메모리도 잽니다.

실행: `python snippets/beyond_checkpointing.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import functools

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

# --8<-- [end:imports]


# --8<-- [start:model]
class MLPBlock(nn.Module):
    """Transformer의 MLP 절반입니다: LayerNorm → Linear(4배) → GELU → Linear, 잔차 연결."""

    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, 4 * d_model)
        self.down = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Stack(nn.Module):
    """블록 여러 개(blocks)와 출력 계층(head)입니다. 순전파 방식은 아래 함수가 정합니다."""

    def __init__(self, d_model=64, num_blocks=4):
        super().__init__()
        self.blocks = nn.ModuleList(MLPBlock(d_model) for _ in range(num_blocks))
        self.head = nn.Linear(d_model, d_model)


# --8<-- [end:model]


# --8<-- [start:slow]
def forward_plain(blocks, x):
    """체크포인팅 없는 순전파(기준): 블록 안의 중간 활성값을 모두 역전파까지 저장합니다."""
    for block in blocks:
        x = block(x)
    return x


# --8<-- [end:slow]


# --8<-- [start:fast]
def forward_checkpointed(blocks, x, every=1):
    """블록을 체크포인팅한 순전파: 블록의 입력만 저장하고, 역전파 때 블록을 다시 계산합니다.

    every=2면 블록을 하나 걸러 체크포인팅합니다(메모리와 시간의 중간).
    use_reentrant=False를 꼭 적습니다. 적지 않으면 경고가 나고, 옛 방식(True)으로 동작합니다.
    """
    for i, block in enumerate(blocks):
        if i % every == 0:
            x = checkpoint(block, x, use_reentrant=False)
        else:
            x = block(x)
    return x


# --8<-- [end:fast]


# --8<-- [start:selective]
# 다시 계산하기 비싼 행렬 곱의 출력은 저장하고, 나머지(LayerNorm, GELU, 더하기)는 다시 계산합니다.
SAVE_OPS = [torch.ops.aten.mm.default, torch.ops.aten.addmm.default]


def forward_selective(blocks, x):
    """선택적 체크포인팅: 블록마다 체크포인팅하되, SAVE_OPS의 출력은 버리지 않고 저장합니다.

    블록마다 체크포인팅보다 메모리는 더 쓰고, 역전파 때 행렬 곱을 다시 하지 않아 시간은 덜 듭니다.
    """
    keep_matmuls = functools.partial(create_selective_checkpoint_contexts, SAVE_OPS)
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=False, context_fn=keep_matmuls)
    return x


# --8<-- [end:selective]


# --8<-- [start:reentrant_pitfall]
def forward_checkpointed_reentrant(blocks, x):
    """옛 방식(use_reentrant=True)입니다. 입력 x가 변화도를 요구하지 않으면(데이터 그 자체이면)
    첫 블록의 출력도 변화도를 요구하지 않게 되어, 그 블록의 가중치 변화도가 None으로 남습니다.
    """
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=True)
    return x


# --8<-- [end:reentrant_pitfall]


# --8<-- [start:step]
def train_step(model, forward, x, y):
    """학습 한 스텝의 순전파와 역전파입니다. forward는 forward_plain 또는 forward_checkpointed."""
    model.zero_grad(set_to_none=True)
    loss = loss_of(model, forward, x, y)
    loss.backward()
    return loss.detach()


def loss_of(model, forward, x, y):
    """순전파와 손실. forward는 forward_plain 또는 forward_checkpointed입니다."""
    return F.mse_loss(model.head(forward(model.blocks, x)), y)


# --8<-- [end:step]


# --8<-- [start:measure]
def saved_activation_bytes(model, forward_pass):
    """forward_pass()가 역전파를 위해 저장하는 텐서의 바이트(가중치는 빼고, 같은 저장소는 한 번만).

    autograd가 텐서를 저장할 때마다 pack 훅이 불립니다. 시간이 아니라 바이트를 세므로 CPU에서도
    정확하고, 다른 프로세스가 돌고 있어도 값이 흔들리지 않습니다. 역전파는 하지 않으므로 변화도가
    남지 않고, 돌려준 손실이 사라지면 그래프도 풀립니다.
    """
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        forward_pass()
    return sum(saved.values())


def peak_memory_of(step_fn, *args):
    """step_fn 한 번이 쓰는 GPU 메모리의 최고점(바이트)을 잽니다. CUDA에서만 동작합니다."""
    if not torch.cuda.is_available():
        raise SystemExit(
            "이 예제는 CUDA GPU가 필요합니다. 최고 메모리 사용량은 "
            "torch.cuda의 메모리 통계로만 잴 수 있습니다."
        )
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step_fn(*args)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


# --8<-- [end:measure]


def make_inputs(device, d_model=64, num_blocks=4, batch=4, seq_len=32, dtype=torch.float32, seed=0):
    """같은 seed면 같은 (모델, x, y)를 장치에 만듭니다. x는 데이터라 변화도를 요구하지 않습니다."""
    torch.manual_seed(seed)
    model = Stack(d_model, num_blocks).to(device=device, dtype=dtype)
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch, seq_len, d_model, device=device, dtype=dtype, generator=g)
    y = torch.randn(batch, seq_len, d_model, device=device, dtype=dtype, generator=g)
    return model, x, y


def main(device="cpu"):
    from torch.utils.benchmark import Timer  # 시연에서 시간을 잴 때만 씁니다.

    device = torch.device(device)
    cuda = device.type == "cuda"
    size = {"d_model": 1024, "num_blocks": 12, "batch": 8, "seq_len": 1024} if cuda else {}
    dtype = torch.bfloat16 if cuda else torch.float32
    model, x, y = make_inputs(device, dtype=dtype, **size)
    print(f"장치: {device}, dtype: {dtype}, 블록 {len(model.blocks)}개, 입력 {tuple(x.shape)}")
    base_s = None
    for label, forward in {
        "체크포인팅 없음": forward_plain,
        "블록마다 체크포인팅": forward_checkpointed,
        "선택적 체크포인팅(행렬 곱 저장)": forward_selective,
    }.items():
        train_step(model, forward, x, y)  # 워밍업
        timer = Timer(
            "f(m, fw, x, y)",
            globals={"f": train_step, "m": model, "fw": forward, "x": x, "y": y},
        )
        seconds = timer.blocked_autorange(min_run_time=0.3).median
        base_s = base_s or seconds
        mib = (
            saved_activation_bytes(model, functools.partial(loss_of, model, forward, x, y)) / 2**20
        )
        line = (
            f"{label}: 한 스텝 {seconds * 1e3:.2f} ms (없음 대비 {seconds / base_s:.2f}배 시간), "
            f"저장한 활성값 {mib:.2f} MiB"
        )
        if forward is forward_selective:
            line += " (따로 보관하는 행렬 곱 출력은 빠진 값)"
        if cuda:
            peak = peak_memory_of(train_step, model, forward, x, y) / 2**20
            line += f", 최고 메모리 {peak:.0f} MiB"
        print(line)


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 8: 활성화 체크포인팅"))
