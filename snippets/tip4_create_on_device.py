"""팁 4: 텐서를 CPU에서 만든 뒤 옮기지 말고, 처음부터 장치(device)에서 만듭니다.

실행: `python snippets/tip4_create_on_device.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:lightning_import]
import lightning as L

# --8<-- [end:lightning_import]
# --8<-- [start:torch_import]
import torch

# --8<-- [end:torch_import]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문 그대로입니다. `tensor`라는 이름은 없으므로 둘 다 NameError로 멈춥니다.
def article_bad():
    # BAD
    t = tensor.rand(2, 2).cuda()
    return t


def article_good():
    # GOOD
    t = tensor.rand(2, 2, device=torch.device("cuda"))
    return t


# --8<-- [end:article_2020]


# --8<-- [start:slow]
def rand_then_copy(shape, device, dtype=torch.float32):
    """CPU 메모리에 난수를 만든 다음 장치로 복사합니다(느린 방식)."""
    return torch.rand(shape, dtype=dtype).to(device)


def zeros_then_copy(shape, device, dtype=torch.float32):
    return torch.zeros(shape, dtype=dtype).to(device)


def arange_then_copy(n, device):
    return torch.arange(n).to(device)


# --8<-- [end:slow]


# --8<-- [start:fast]
def rand_on_device(shape, device, dtype=torch.float32):
    """장치 메모리에 바로 난수를 만듭니다(빠른 방식). 호스트→장치 복사가 없습니다."""
    return torch.rand(shape, dtype=dtype, device=device)


def zeros_on_device(shape, device, dtype=torch.float32):
    return torch.zeros(shape, dtype=dtype, device=device)


def arange_on_device(n, device):
    return torch.arange(n, device=device)


# --8<-- [end:fast]


# --8<-- [start:lightning]
class NoisyRegressor(L.LightningModule):
    """입력에 작은 잡음을 더해 학습하는 회귀 모델입니다."""

    def __init__(self, features=16):
        super().__init__()
        self.layer = torch.nn.Linear(features, 1)

    def add_noise(self, x):
        # self.device에서 바로 만듭니다. `.cuda()`는 CPU·MPS에서 실패하고, set_device를 부르지 않은
        # 스크립트에서는 늘 GPU 0에 만듭니다(Lightning DDP는 프로세스마다 장치를 정해 둡니다).
        return x + 0.01 * torch.randn(x.shape, device=self.device)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(self.add_noise(x)), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


# --8<-- [end:lightning]

# 느린 방식과 빠른 방식의 짝입니다. 테스트와 벤치마크가 이 목록을 그대로 씁니다.
PAIRS = {
    "rand": (rand_then_copy, rand_on_device),
    "zeros": (zeros_then_copy, zeros_on_device),
    "arange": (arange_then_copy, arange_on_device),
}


def make_inputs(kind, device, size=1 << 22):
    """짝 이름에 맞는 인자(모양 또는 길이, 장치)를 만듭니다. 기본 크기는 float32 16 MiB입니다."""
    return ((size,), device) if kind in ("rand", "zeros") else (size, device)


def main(device="cpu"):
    from torch.utils.benchmark import Timer

    device = torch.device(device)
    print(f"장치: {device}")
    for kind, (slow, fast) in PAIRS.items():
        args = make_inputs(kind, device)
        # torch.utils.benchmark.Timer는 CUDA를 동기화하고 반복 횟수를 알아서 정합니다.
        slow_s = Timer("f(*args)", globals={"f": slow, "args": args}).blocked_autorange().median
        fast_s = Timer("f(*args)", globals={"f": fast, "args": args}).blocked_autorange().median
        print(
            f"{kind:>6}: CPU에서 만들고 복사 {slow_s * 1e3:.3f} ms, "
            f"장치에서 바로 {fast_s * 1e3:.3f} ms ({slow_s / fast_s:.1f}배)"
        )
    if device.type == "cpu":
        print('CPU에서는 `.to("cpu")`가 아무것도 복사하지 않으므로 두 방식이 같습니다.')
        print("차이를 보려면 CUDA GPU가 있는 컴퓨터에서 `--device cuda`로 실행하세요.")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 4: 텐서를 장치에서 바로 만들기"))
