"""팁 3: 학습 루프 안에서 GPU 값을 CPU로 읽지 않습니다(CPU↔GPU 동기화 피하기).

실행: `python snippets/tip3_avoid_syncs.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
from torch import nn

# --8<-- [end:imports]


# --8<-- [start:setup]
def make_training_setup(device, steps=20, batch_size=64, features=32, dtype=torch.float32, seed=0):
    """모델, 옵티마이저, 배치 목록을 만듭니다.

    배치는 미리 장치에 올려 두어 데이터 복사가 비교에 끼지 않게 합니다.
    """
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(features, 256), nn.ReLU(), nn.Linear(256, 1))
    model = model.to(device=device, dtype=dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [
        (
            torch.randn(batch_size, features, device=device, dtype=dtype),
            torch.randn(batch_size, 1, device=device, dtype=dtype),
        )
        for _ in range(steps)
    ]
    return model, optimizer, batches


def train_step(model, optimizer, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


# --8<-- [end:setup]


# --8<-- [start:slow]
def train_reading_every_step(model, optimizer, batches):
    """매 스텝 `.item()`으로 손실을 읽습니다(느린 방식)."""
    losses = []
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
        # .item()은 GPU가 이 값을 다 계산할 때까지 CPU를 세워 둡니다. 그동안 다음 커널이 밀립니다.
        losses.append(loss.item())
    return losses


# --8<-- [end:slow]


# --8<-- [start:fast]
def train_reading_rarely(model, optimizer, batches):
    """손실을 장치에 모아 두었다가 끝에 한 번만 읽습니다(빠른 방식)."""
    losses = []
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
        # detach()는 계산 그래프에서 떼어 낼 뿐 값을 옮기지 않습니다. 텐서는 장치에 그대로 있습니다.
        losses.append(loss.detach())
    # 동기화는 여기서 한 번만 일어납니다.
    return torch.stack(losses).tolist()


# --8<-- [end:fast]


# --8<-- [start:to_numpy]
def to_numpy(tensor):
    """GPU에 있고 변화도를 추적하는 텐서도 NumPy 배열로 바꿉니다.

    `.numpy()`는 CPU 텐서에만 됩니다. GPU 텐서에는 TypeError, requires_grad 텐서에는
    RuntimeError가 납니다. 그래서 `.detach()`로 그래프에서 떼고 `.cpu()`로 가져옵니다.
    `.cpu()`가 GPU를 기다리는(동기화) 곳이므로, 루프 밖에서 한 번에 부르세요.
    """
    return tensor.detach().cpu().numpy()


# --8<-- [end:to_numpy]


def train_without_reading(model, optimizer, batches):
    """손실을 전혀 읽지 않는 같은 루프입니다. 읽기를 없앴을 때의 한계(ceiling)를 보여 줍니다."""
    for x, y in batches:
        train_step(model, optimizer, x, y)


# --8<-- [start:count_syncs]
def count_syncs(train_fn, *args):
    """`torch.cuda.set_sync_debug_mode`로 train_fn이 일으킨 동기화 경고를 셉니다(CUDA 전용).

    모든 동기화를 잡지는 못하지만 `.item()`, `.cpu()`, `.tolist()` 같은 흔한 경우는 잡습니다.
    """
    import warnings

    if not torch.cuda.is_available():
        raise SystemExit("이 예제는 CUDA GPU가 필요합니다: 동기화 감지는 CUDA에서만 동작합니다.")
    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            train_fn(*args)
            torch.cuda.synchronize()
        finally:
            torch.cuda.set_sync_debug_mode(previous)
    return sum("synchroniz" in str(w.message) for w in caught)


# --8<-- [end:count_syncs]

VARIANTS = {
    "매 스텝 .item()": train_reading_every_step,
    "끝에 한 번 읽기": train_reading_rarely,
    "읽지 않음(한계)": train_without_reading,
}


def main(device="cpu"):
    from torch.utils.benchmark import Timer

    device = torch.device(device)
    print(f"장치: {device}")
    for label, train_fn in VARIANTS.items():
        setup = make_training_setup(device)
        timer = Timer("f(*setup)", globals={"f": train_fn, "setup": setup})
        per_step_ms = timer.blocked_autorange(min_run_time=0.5).median / len(setup[2]) * 1e3
        line = f"{label}: 스텝당 {per_step_ms:.3f} ms"
        if device.type == "cuda":
            line += f", 동기화 {count_syncs(train_fn, *make_training_setup(device))}회"
        print(line)
    if device.type == "cpu":
        print(
            "CPU에서는 기다릴 장치가 없으므로 .item()이 거의 공짜입니다. 차이는 GPU에서 드러납니다."
        )


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 3: CPU↔GPU 동기화 피하기"))
