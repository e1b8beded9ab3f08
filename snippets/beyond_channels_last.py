"""더 나아가기 6: 합성곱 모델과 입력을 `channels_last` 메모리 형식으로 바꿉니다.

같은 합성곱 계층 묶음을 기본 형식(NCHW)과 channels_last(NHWC)로 학습 한 번(순전파+역전파)씩
돌립니다. 보통 합성곱(groups=1), 그룹 합성곱, 깊이별(depthwise) 합성곱을 따로 봅니다.

실행: `python snippets/beyond_channels_last.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
from torch import nn
from torch.utils.benchmark import Timer

# --8<-- [end:imports]


# --8<-- [start:model]
def conv_stack(channels=64, groups=1, num_layers=3):
    """3×3 합성곱 → BatchNorm → ReLU를 num_layers번 쌓습니다.

    groups=1은 보통 합성곱(ResNet), groups=channels는 깊이별 합성곱(MobileNet)이고,
    그 사이는 그룹 합성곱(ResNeXt)입니다.
    """
    layers = []
    for _ in range(num_layers):
        layers += [
            nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
        ]
    return nn.Sequential(*layers)


def train_step(model, x, autocast_dtype=None):
    """순전파와 역전파 한 번입니다. autocast_dtype을 주면 그 dtype의 autocast 안에서 계산합니다."""
    model.zero_grad(set_to_none=True)
    with torch.autocast(x.device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
        out = model(x)
    loss = out.float().square().mean()
    loss.backward()
    return out


# --8<-- [end:model]


# --8<-- [start:slow]
def keep_nchw(model, x):
    """아무것도 바꾸지 않습니다(기준). PyTorch의 기본 형식은 (N, C, H, W) 순서인 NCHW입니다."""
    return model, x


# --8<-- [end:slow]


# --8<-- [start:fast]
def to_channels_last(model, x):
    """모델의 4차원 가중치와 입력을 channels_last로 바꿉니다. 모양은 그대로, 보폭만 바뀝니다.

    합성곱 출력도 channels_last로 나오므로 다음 계층에도 형식이 이어집니다. 둘 다 바꿔야 합니다.
    """
    model = model.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
    return model, x


# --8<-- [end:fast]


# --8<-- [start:pitfall]
def flatten_features(out):
    """channels_last 출력에 `.view(N, -1)`을 쓰면 RuntimeError가 납니다(메모리가 NCHW 순서가 아님).

    `.contiguous().view(...)`로 고치면 NCHW로 되돌리는 복사가 생깁니다. `flatten`이나 `reshape`는
    필요할 때만 복사합니다. 평균 풀링처럼 형식과 상관없는 연산으로 줄인 뒤 펴는 편이 낫습니다.
    """
    return out.mean(dim=(2, 3)).flatten(1)


# --8<-- [end:pitfall]

# 합성곱 종류 → groups를 정하는 함수(채널 수를 받음). 그룹 합성곱은 ResNeXt처럼 그룹당 채널 4개.
KINDS = {
    "dense": lambda channels: 1,
    "grouped": lambda channels: channels // 4,
    "depthwise": lambda channels: channels,
}


def make_inputs(device, kind="dense", channels=32, batch=4, size=16, num_layers=2, seed=0):
    """같은 seed면 같은 (모델, x)를 기본 형식(NCHW)으로 장치에 만듭니다."""
    torch.manual_seed(seed)
    model = conv_stack(channels, KINDS[kind](channels), num_layers).to(device)
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch, channels, size, size, device=device, generator=g)
    return model, x


def main(device="cpu"):
    device = torch.device(device)
    cuda = device.type == "cuda"
    size = {"channels": 128, "batch": 64, "size": 56, "num_layers": 3} if cuda else {}
    # GPU의 channels_last는 16비트 텐서 코어에서 이득이 크므로 bf16 autocast도 함께 봅니다.
    dtypes = {"fp32": None, "bf16 autocast": torch.bfloat16}
    print(f"장치: {device}, 크기: {size or '작은 CPU 크기'}")
    for dtype_label, dtype in dtypes.items():
        for kind in KINDS:
            times = {}
            for label, convert in {"NCHW": keep_nchw, "channels_last": to_channels_last}.items():
                model, x = convert(*make_inputs(device, kind, **size))
                train_step(model, x, dtype)  # 워밍업
                timer = Timer(
                    "f(m, x, d)", globals={"f": train_step, "m": model, "x": x, "d": dtype}
                )
                times[label] = timer.blocked_autorange(min_run_time=0.1).median
            ratio = times["NCHW"] / times["channels_last"]
            verdict = "빨라짐" if ratio > 1 else "느려짐"
            print(
                f"{dtype_label}, {kind}: NCHW {times['NCHW'] * 1e3:.2f} ms, "
                f"channels_last {times['channels_last'] * 1e3:.2f} ms ({ratio:.2f}배, {verdict})"
            )
    print("방향은 장치, dtype, 합성곱 종류에 따라 달라집니다. 내 모델에서 직접 재 보고 정하세요.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 6: channels_last 메모리 형식"))
