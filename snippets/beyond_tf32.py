"""더 나아가기 4: TF32와 `fp32_precision`.

fp32 행렬 곱을 TF32 텐서 코어로 계산하게 하는 설정입니다. 기본값은 행렬 곱(cuBLAS)에서는 꺼져 있고,
cuDNN 합성곱에서는 켜져 있습니다. 프로그램 전체에 켤 때는 옛 API로 설정을 읽는 라이브러리(Lightning,
Inductor)도 함께 돌도록 `torch.set_float32_matmul_precision("high")`을 씁니다.

실행: `python snippets/beyond_tf32.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:defaults]
def fp32_settings():
    """지금의 fp32 정밀도 설정입니다. "none"은 '따로 정하지 않음(기본 동작)'입니다."""
    return {
        "행렬 곱(cuBLAS)": torch.backends.cuda.matmul.fp32_precision,
        "합성곱(cuDNN)": torch.backends.cudnn.conv.fp32_precision,
        "RNN(cuDNN)": torch.backends.cudnn.rnn.fp32_precision,
        "행렬 곱(oneDNN, CPU)": torch.backends.mkldnn.matmul.fp32_precision,
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
def enable_tf32():
    """프로그램 처음에 한 번 부릅니다. 행렬 곱의 새 설정(fp32_precision)이 "tf32"가 되고,
    옛 API로 설정을 읽는 Lightning과 Inductor도 그대로 돕니다. 합성곱은 이미 TF32가 기본입니다."""
    torch.set_float32_matmul_precision("high")


# --8<-- [end:whole_program]


# --8<-- [start:mixed_api]
def enable_tf32_new_api():
    """새 API로만 켭니다. 이 뒤에 옛 API로 설정을 읽는 코드는 모두 RuntimeError로 멈춥니다."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"


def read_legacy_precision():
    """옛 API로 설정을 읽습니다. Lightning의 Trainer와 Inductor의 autotuning이 이렇게 읽습니다."""
    return torch.get_float32_matmul_precision()


# --8<-- [end:mixed_api]


# --8<-- [start:cpu_bf16]
def matmul_cpu_ieee(a, b):
    """CPU(oneDNN)의 fp32 행렬 곱을 IEEE fp32 그대로 계산합니다(CPU의 기본 동작)."""
    previous = torch.backends.mkldnn.matmul.fp32_precision
    torch.backends.mkldnn.matmul.fp32_precision = "ieee"
    try:
        return a @ b
    finally:
        torch.backends.mkldnn.matmul.fp32_precision = previous


def matmul_cpu_bf16(a, b):
    """같은 fp32 행렬 곱을 CPU(oneDNN)에서 속으로 bf16으로 계산합니다(PyTorch 2.9부터).

    AVX512-BF16이나 AMX가 있는 CPU에서만 빨라집니다. 그런 명령이 없으면 fp32 그대로 계산합니다.
    """
    previous = torch.backends.mkldnn.matmul.fp32_precision
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    try:
        return a @ b
    finally:
        torch.backends.mkldnn.matmul.fp32_precision = previous


# --8<-- [end:cpu_bf16]


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


def compare(label, slow, fast, args):
    """느린 함수와 빠른 함수의 시간과 상대 오차를 출력합니다. Timer는 CUDA를 동기화합니다."""
    error = relative_error(fast(*args), slow(*args))
    slow_s = Timer("f(*args)", globals={"f": slow, "args": args}).blocked_autorange().median
    fast_s = Timer("f(*args)", globals={"f": fast, "args": args}).blocked_autorange().median
    print(
        f"{label}: {slow.__name__} {slow_s * 1e3:.3f} ms, {fast.__name__} {fast_s * 1e3:.3f} ms "
        f"({slow_s / fast_s:.2f}배), 상대 오차 {error:.1e}"
    )
    return error


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}")
    for name, value in fp32_settings().items():
        print(f"기본 설정 {name}: {value!r}")
    print(f"옛 API로 읽은 값: torch.get_float32_matmul_precision() = {read_legacy_precision()!r}")
    (a, b), (x, weight) = make_inputs(device, n=2048 if device.type == "cuda" else 256)
    compare("행렬 곱", matmul_ieee, matmul_tf32, (a, b))
    compare("합성곱", conv_ieee, conv_tf32, (x, weight))
    if device.type != "cpu":
        return
    print("CPU에는 TF32가 없어 위의 두 설정이 똑같이 계산합니다.")
    print("CPU에서 같은 일을 하는 설정은 oneDNN의 bf16입니다:")
    if compare("CPU 행렬 곱", matmul_cpu_ieee, matmul_cpu_bf16, (a, b)) == 0:
        print(
            "이 CPU에는 bf16 행렬 곱 명령(AVX512-BF16, AMX)이 없어 이 설정도 바꾸는 것이 없습니다."
        )
    print("TF32를 보려면 CUDA GPU가 있는 컴퓨터에서 `--device cuda`로 실행하세요.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 4: TF32와 fp32_precision"))
