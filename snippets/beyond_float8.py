"""더 나아가기 12: float8 학습(torchao).

계산 능력 8.9 이상의 NVIDIA GPU(Ada, Hopper, Blackwell)와 AMD MI300X는 float8 행렬 곱을 bf16의 두 배
속도로 합니다.
torchao의 `convert_to_float8_training`은 `nn.Linear`를 float8로 계산하는 계층으로 바꿉니다. 텐서마다
배율(scale)을 구해 float8로 바꾸는 일이 덧붙으므로, 행렬이 작으면 오히려 느립니다.

torchao는 GPU 경로 안에서만 import합니다. 그래서 이 파일은 torchao가 없는 CPU 컴퓨터에서도 열리고,
무엇이 필요한지 한국어로 알려 줍니다.

실행: `python snippets/beyond_float8.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:setup]
def make_model(dim=1024, hidden=4096, layers=2, dtype=torch.bfloat16, seed=0):
    """트랜스포머의 MLP 블록을 쌓은 모델. float8 행렬 곱은 모든 차원이 16의 배수여야 합니다."""
    torch.manual_seed(seed)
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, dim)]
    return torch.nn.Sequential(*blocks).to(dtype)


def make_inputs(tokens=4096, dim=1024, dtype=torch.bfloat16, seed=1):
    """(토큰 수, dim) 입력입니다. 배치 × 시퀀스 길이를 한 축으로 편 것과 같습니다."""
    return torch.randn(tokens, dim, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def train_step(model, optimizer, x):
    """순전파, 역전파, 갱신 한 번입니다. 손실은 출력의 제곱 평균(모양만 있으면 되는 예제)."""
    optimizer.zero_grad()
    loss = model(x).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.detach()


def linear_flops(model, tokens):
    """학습 스텝 한 번의 행렬 곱 연산 수(곱셈과 덧셈을 따로 셉니다).

    Linear 하나의 행렬 곱은 세 번입니다: 출력, 가중치의 변화도, 입력의 변화도(각 2·토큰·입력·출력).
    첫 Linear의 입력은 데이터라 변화도가 필요 없어서, 그 Linear의 입력 변화도는 계산하지 않습니다.
    """
    # torchao의 Float8Linear도 nn.Linear의 하위 클래스라서 함께 셉니다.
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    per_matmul = [2 * tokens * m.in_features * m.out_features for m in linears]
    return 3 * sum(per_matmul) - per_matmul[0]


# --8<-- [end:setup]


# --8<-- [start:check]
def float8_support(device):
    """이 장치에서 float8 학습을 쓸 수 있으면 None, 없으면 그 이유(한국어)를 돌려줍니다."""
    if device.type != "cuda":
        return (
            "float8 학습에는 CUDA GPU가 필요합니다. float8 행렬 곱은 계산 능력 8.9 이상의 "
            "NVIDIA GPU(Ada, Hopper, Blackwell)와 AMD MI300X의 텐서 코어에서만 빠릅니다."
        )
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < (8, 9):
        name = torch.cuda.get_device_name(device)
        return (
            f"{name}(계산 능력 {major}.{minor})에는 float8 텐서 코어가 없습니다. "
            "A100을 포함한 Ampere 이하의 GPU는 쓸 수 없고, 계산 능력 8.9 이상"
            "(RTX 4090, L4, H100, H200, B200 등)이 필요합니다."
        )
    try:
        import torchao  # noqa: F401
    except ImportError:
        return "torchao가 설치되어 있지 않습니다. `pip install torchao`로 설치하세요."
    return None


def require_float8(device):
    """float8을 쓸 수 없으면 이유를 한국어로 남기고 멈춥니다(종료 코드 1)."""
    reason = float8_support(device)
    if reason:
        raise SystemExit(f"이 예제는 CUDA GPU가 필요합니다. {reason}")


# --8<-- [end:check]


# --8<-- [start:slow]
def bf16_model(model):
    """기준: bf16 모델을 그대로 컴파일합니다(float8 쪽과 같은 조건으로 비교하려고)."""
    return torch.compile(model)


# --8<-- [end:slow]


# --8<-- [start:fast]
def float8_model(model, compile=True):
    """nn.Linear를 torchao의 Float8Linear로 바꾸고 컴파일합니다.

    배율을 구하고 float8로 바꾸는 연산을 행렬 곱과 합쳐 주는 torch.compile이 있어야 빨라집니다.
    차원이 16의 배수가 아닌 계층은 float8 행렬 곱을 쓸 수 없어 건너뜁니다.
    """
    from torchao.float8 import convert_to_float8_training  # GPU 경로에서만 필요합니다.

    def divisible_by_16(module, fqn):
        return module.in_features % 16 == 0 and module.out_features % 16 == 0

    convert_to_float8_training(model, module_filter_fn=divisible_by_16)
    return torch.compile(model) if compile else model


# --8<-- [end:fast]


def main(device="cpu"):
    device = torch.device(device)
    reason = float8_support(device)
    if reason:
        print(f"장치: {device}. 여기서는 float8 학습을 재지 않습니다: {reason}")
        return
    print(f"장치: {torch.cuda.get_device_name(device)}")
    for dim, hidden, tokens in [(512, 2048, 4096), (4096, 16384, 8192)]:
        x = make_inputs(tokens, dim).to(device)
        times = {}
        for label, wrap in [("bf16", bf16_model), ("float8", float8_model)]:
            print(f"dim {dim}: {label} 모델을 컴파일하고 재는 중입니다(첫 호출이 오래 걸립니다)...")
            model = wrap(make_model(dim, hidden).to(device))
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
            train_step(model, optimizer, x)  # 컴파일은 여기서 끝납니다.
            timer = Timer(
                "f(m, o, x)", globals={"f": train_step, "m": model, "o": optimizer, "x": x}
            )
            times[label] = timer.blocked_autorange(min_run_time=0.5).median
        ratio = times["bf16"] / times["float8"]
        verdict = "빠릅니다" if ratio > 1 else "느립니다"
        print(
            f"dim {dim}, hidden {hidden}, 토큰 {tokens}: bf16 {times['bf16'] * 1e3:.2f} ms, "
            f"float8 {times['float8'] * 1e3:.2f} ms, float8이 {ratio:.2f}배로 {verdict}"
        )


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 12: float8 학습(torchao)"))
