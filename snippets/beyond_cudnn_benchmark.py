"""더 나아가기 7: `torch.backends.cudnn.benchmark = True`로 합성곱 알고리즘을 자동으로 고릅니다.

모양이 고정된 입력에서는 처음 한 번 여러 알고리즘을 재 보고 가장 빠른 것을 계속 씁니다.
모양이 계속 바뀌면 새 모양마다 다시 재느라 오히려 느려집니다. cuDNN(NVIDIA GPU)에만 있는
설정이라 CPU에서는 아무 일도 하지 않습니다.

실행: `python snippets/beyond_cudnn_benchmark.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
from torch import nn

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:model]
def conv_net(channels=32, num_layers=4):
    """3×3 합성곱 → BatchNorm → ReLU를 쌓은 작은 합성곱 신경망입니다."""
    layers = [nn.Conv2d(3, channels, 3, padding=1, bias=False)]
    for _ in range(num_layers - 1):
        layers += [
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
        ]
    return nn.Sequential(*layers)


def train_step(model, x):
    """순전파와 역전파 한 번입니다. 합성곱마다 출력, 입력 변화도, 가중치 변화도를 계산합니다."""
    model.zero_grad(set_to_none=True)
    out = model(x)
    out.float().square().mean().backward()
    return out


# --8<-- [end:model]


# --8<-- [start:slow]
def steps_default(model, batches):
    """기본 설정(benchmark=False)으로 학습합니다. cuDNN이 경험 규칙으로 알고리즘을 고릅니다."""
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = False
    try:
        return [train_step(model, x) for x in batches]
    finally:
        torch.backends.cudnn.benchmark = previous


# --8<-- [end:slow]


# --8<-- [start:fast]
def steps_benchmark(model, batches):
    """benchmark=True로 학습합니다. 새 입력 모양을 처음 볼 때마다 알고리즘을 재 보고 고릅니다.

    보통은 학습 스크립트 맨 위에 `torch.backends.cudnn.benchmark = True` 한 줄을 둡니다.
    여기서는 비교를 위해 이 함수 안에서만 켜고 되돌립니다.
    """
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        return [train_step(model, x) for x in batches]
    finally:
        torch.backends.cudnn.benchmark = previous


# --8<-- [end:fast]


# --8<-- [start:shapes]
def fixed_batches(device, count, batch=8, size=64, seed=0):
    """모두 같은 모양의 배치입니다. 알고리즘 탐색은 처음 한 번만 일어납니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(batch, 3, size, size, device=device, generator=g) for _ in range(count)]


def changing_batches(device, count, batch=8, size=64, start=0, widen=1, seed=0):
    """배치마다 높이와 너비가 다른 배치입니다(가변 길이 음성, 원본 크기 이미지처럼).

    높이는 size+start, size+start+1, …로 늘고 너비는 높이+widen입니다. start를 바꾸면 쓴 적 없는
    모양이 나오고, widen이 다르면 두 목록의 모양이 절대 겹치지 않습니다.
    """
    g = torch.Generator(device=device).manual_seed(seed)
    heights = [size + start + i for i in range(count)]
    return [torch.randn(batch, 3, h, h + widen, device=device, generator=g) for h in heights]


# --8<-- [end:shapes]


def make_inputs(device, channels=16, num_layers=3, seed=0):
    """같은 seed면 같은 가중치의 합성곱 신경망을 장치에 만듭니다."""
    torch.manual_seed(seed)
    return conv_net(channels, num_layers).to(device)


def main(device="cpu"):
    import itertools  # 바뀌는 모양을 끝없이 만들 때만 씁니다.

    device = torch.device(device)
    cuda = device.type == "cuda"
    channels, size = (64, 128) if cuda else (16, 32)
    model = make_inputs(device, channels=channels)
    print(f"장치: {device}, 채널 {channels}, 입력 {size}×{size}부터")
    fixed = fixed_batches(device, 10, size=size)
    for label, steps in {
        "benchmark=False": steps_default,
        "benchmark=True": steps_benchmark,
    }.items():
        steps(model, fixed[:1])  # 워밍업: benchmark=True는 여기서 알고리즘을 고릅니다.
        timer = Timer("f(m, b)", globals={"f": steps, "m": model, "b": fixed})
        per_step = timer.blocked_autorange(min_run_time=0.3).median / len(fixed)
        print(f"고정된 모양, {label}: 스텝당 {per_step * 1e3:.2f} ms")
    for offset, (label, steps) in enumerate(
        {"benchmark=False": steps_default, "benchmark=True": steps_benchmark}.items()
    ):
        # 호출마다 처음 보는 모양 5개를 새로 만듭니다(두 설정이 겹치지 않게 widen을 다르게).
        # Timer가 같은 문장을 여러 번 부르므로, 같은 배치를 다시 주면 두 번째부터는 본 모양입니다.
        fresh = (
            changing_batches(device, 5, size=size, start=1 + 5 * i, widen=1 + offset)
            for i in itertools.count()
        )
        timer = Timer("f(m, next(b))", globals={"f": steps, "m": model, "b": fresh})
        per_step = timer.blocked_autorange(min_run_time=0.3).median / 5
        print(f"바뀌는 모양, {label}: 스텝당 {per_step * 1e3:.2f} ms (모든 스텝이 처음 보는 모양)")
    if not cuda:
        print("CPU에는 cuDNN이 없어서 benchmark 설정이 아무 일도 하지 않습니다.")
        print("위의 차이는 측정 오차입니다. GPU에서 `--device cuda`로 실행해 보세요.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 7: cudnn.benchmark"))
