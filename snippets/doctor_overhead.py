"""내 학습 진단하기: torchdoctor의 시간 창이 학습 스텝에 더하는 비용.

진단기는 시간 창에서 옵티마이저 스텝 훅 두 개(스텝 경계)와 DataLoader의 `__next__`(배치를 기다린
시간)만 둡니다. 이 모듈은 같은 작은 학습 스텝을 진단기 없이, 그리고 진단기의 시간 창 안에서 돌려
그 비용을 잽니다. 창을 여닫는 일(훅을 걸고 떼기)도 호출마다 넣으므로 실제보다 조금 크게 잽니다.

torchdoctor는 저장소에서 설치합니다(`pip install .`). 이 모듈은 함수 안에서만 가져옵니다.

실행: `python snippets/doctor_overhead.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

# --8<-- [end:imports]


# --8<-- [start:setup]
def make_setup(device, layers=4, width=256, batch=64, steps=20, seed=0):
    """작은 MLP, 융합 옵티마이저, 메모리에 미리 만든 배치를 내주는 로더입니다."""
    torch.manual_seed(seed)
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*blocks, torch.nn.Linear(width, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, fused=True)
    generator = torch.Generator().manual_seed(seed + 1)
    batches = [
        (torch.randn(batch, width, generator=generator), torch.randn(batch, 1, generator=generator))
        for _ in range(steps)
    ]
    # batch_size=None: 로더는 미리 만든 배치를 하나씩 내줍니다(collate 없이).
    return model, optimizer, DataLoader(batches, batch_size=None)


# --8<-- [end:setup]


# --8<-- [start:slow]
def train_steps(model, optimizer, loader):
    """평범한 학습 스텝들입니다(기준). 손실은 장치에 모아 끝에 돌려줍니다."""
    device = next(model.parameters()).device
    losses = []
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


# --8<-- [end:slow]


# --8<-- [start:fast]
def open_timed_window():
    """torchdoctor를 켜고 탐침 단계 없이 바로 시간 창에 둡니다(스텝 경계와 배치 기다림만 잽니다)."""
    from torchdoctor.doctor import Doctor

    return Doctor(measure_fixes=False, steps=10**9).start_timed()


def train_steps_in_timed_window(model, optimizer, loader):
    """같은 학습 스텝들을 진단기의 시간 창 안에서 돌립니다. 창을 여닫는 비용도 넣습니다."""
    doctor = open_timed_window()
    try:
        return train_steps(model, optimizer, loader)
    finally:
        doctor.stop()


# --8<-- [end:fast]


def main(device):
    import importlib.util

    from torch.utils.benchmark import Timer

    print(f"장치: {device}")
    if importlib.util.find_spec("torchdoctor") is None:
        # 내려받은 노트북처럼 저장소 밖에서 돌면 torchdoctor가 없습니다: 그렇다고 말하고 끝냅니다.
        print("torchdoctor가 설치되어 있지 않습니다. 저장소 폴더에서 `pip install .`로 설치하세요.")
        return
    # 어느 쪽을 먼저 재든 같게: 두 설정을 같은 시드로 만듭니다.
    plain = make_setup(device)
    windowed = make_setup(device)
    for label, fn, setup in (
        ("진단기 없이", train_steps, plain),
        ("진단기의 시간 창 안에서", train_steps_in_timed_window, windowed),
    ):
        fn(*setup)  # 워밍업
        timer = Timer("fn(*setup)", globals={"fn": fn, "setup": setup})
        seconds = timer.blocked_autorange(min_run_time=0.5).median
        print(f"{label}: 스텝 20개에 {seconds * 1000:.2f} ms")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("내 학습 진단하기: 시간 창의 비용"))
