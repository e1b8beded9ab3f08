"""더 나아가기 4: TF32와 `fp32_precision`.

fp32 행렬 곱을 TF32 텐서 코어로 계산하게 하는 설정입니다. 기본값은 행렬 곱(cuBLAS)에서는 꺼져 있고,
cuDNN 합성곱에서는 켜져 있습니다. torch 2.13의 `fp32_precision` API로 읽고 바꿉니다.

실행: `python snippets/beyond_tf32.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F
from torch.utils.benchmark import Timer

# --8<-- [end:imports]


# --8<-- [start:defaults]
def fp32_settings():
    """지금의 fp32 정밀도 설정입니다. "none"은 '따로 정하지 않음(기본 동작)'입니다."""
    return {
        "행렬 곱(cuBLAS)": torch.backends.cuda.matmul.fp32_precision,
        "합성곱(cuDNN)": torch.backends.cudnn.conv.fp32_precision,
        "RNN(cuDNN)": torch.backends.cudnn.rnn.fp32_precision,
    }


# --8<-- [end:defaults]


# --8<-- [start:slow]
def matmul_ieee(a, b):
    """fp32 행렬 곱을 IEEE fp32 그대로 계산합니다. PyTorch 1.12부터 행렬 곱의 기본 동작입니다."""
    previous = torch.backends.cuda.matmul.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    try:
        return a @ b
    finally:
        torch.backends.cuda.matmul.fp32_precision = previous


def conv_ieee(x, weight):
    """합성곱을 IEEE fp32로 계산합니다. cuDNN 합성곱은 기본이 TF32라서 일부러 꺼야 이렇게 됩니다."""
    previous = torch.backends.cudnn.conv.fp32_precision
    torch.backends.cudnn.conv.fp32_precision = "ieee"
    try:
        return F.conv2d(x, weight, padding=1)
    finally:
        torch.backends.cudnn.conv.fp32_precision = previous


# --8<-- [end:slow]


# --8<-- [start:fast]
def matmul_tf32(a, b):
    """같은 fp32 행렬 곱을 TF32 텐서 코어로 계산합니다(가수 10비트로 곱하고 fp32로 더합니다)."""
    previous = torch.backends.cuda.matmul.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    try:
        return a @ b
    finally:
        torch.backends.cuda.matmul.fp32_precision = previous


def conv_tf32(x, weight):
    """합성곱을 TF32로 계산합니다. cuDNN 합성곱의 기본 동작과 같습니다."""
    previous = torch.backends.cudnn.conv.fp32_precision
    torch.backends.cudnn.conv.fp32_precision = "tf32"
    try:
        return F.conv2d(x, weight, padding=1)
    finally:
        torch.backends.cudnn.conv.fp32_precision = previous


# --8<-- [end:fast]


# --8<-- [start:whole_program]
def enable_tf32_everywhere():
    """프로그램 처음에 한 번 부릅니다. 새 API 하나로만 씁니다(옛 API와 섞지 않습니다)."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "tf32"


# --8<-- [end:whole_program]


# --8<-- [start:mixed_api]
def read_legacy_flag():
    """옛 API로 행렬 곱의 TF32 설정을 읽습니다. 새 API로 바꾼 뒤라면 RuntimeError가 납니다."""
    return torch.backends.cuda.matmul.allow_tf32


# --8<-- [end:mixed_api]


def make_inputs(device, n=1024, channels=64, size=32, batch_size=8, seed=0):
    """행렬 곱용 (a, b)와 합성곱용 (x, weight)를 fp32로 만듭니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(n, n, device=device, generator=g)
    b = torch.randn(n, n, device=device, generator=g)
    x = torch.randn(batch_size, channels, size, size, device=device, generator=g)
    weight = torch.randn(channels, channels, 3, 3, device=device, generator=g) / (3 * channels**0.5)
    return (a, b), (x, weight)


def relative_error(actual, expected):
    return ((actual - expected).norm() / expected.norm()).item()


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}")
    for name, value in fp32_settings().items():
        print(f"기본 설정 {name}: {value!r}")
    print(f"옛 API로 읽은 값: 행렬 곱 allow_tf32={torch.backends.cuda.matmul.allow_tf32}, "
          f"cuDNN allow_tf32={torch.backends.cudnn.allow_tf32}")  # fmt: skip
    (a, b), (x, weight) = make_inputs(device, n=2048 if device.type == "cuda" else 256)
    pairs = {
        "행렬 곱": (matmul_ieee, matmul_tf32, (a, b)),
        "합성곱": (conv_ieee, conv_tf32, (x, weight)),
    }
    for label, (slow, fast, args) in pairs.items():
        error = relative_error(fast(*args), slow(*args))
        slow_s = Timer("f(*args)", globals={"f": slow, "args": args}).blocked_autorange().median
        fast_s = Timer("f(*args)", globals={"f": fast, "args": args}).blocked_autorange().median
        print(
            f"{label}: ieee {slow_s * 1e3:.3f} ms, tf32 {fast_s * 1e3:.3f} ms "
            f"({slow_s / fast_s:.2f}배), 상대 오차 {error:.1e}"
        )
    if device.type == "cpu":
        print(
            "CPU에서는 이 설정이 아무것도 바꾸지 않습니다. "
            "TF32는 NVIDIA GPU(Ampere 이후)의 형식입니다."
        )
        print("차이를 보려면 CUDA GPU가 있는 컴퓨터에서 `--device cuda`로 실행하세요.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 4: TF32와 fp32_precision"))
