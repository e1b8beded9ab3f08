"""팁 6: 16비트 정밀도(혼합 정밀도)로 학습합니다.

같은 모델, 같은 배치로 학습 스텝 하나를 fp32, tf32, fp16(+GradScaler), bf16으로 돌려 비교합니다.

실행: `python snippets/tip6_16bit.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:lightning_import]
import lightning as L

# --8<-- [end:lightning_import]
# --8<-- [start:torch_imports]
import torch
import torch.nn.functional as F
from torch import nn

# --8<-- [end:torch_imports]
# --8<-- [start:data_imports]
from torch.utils.data import DataLoader, TensorDataset

# --8<-- [end:data_imports]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문(2020)의 한 줄입니다. 지금도 동작하지만, 정수 16은 권하지 않는다는 경고가 납니다.
def article_trainer():
    return L.Trainer(precision=16)


# --8<-- [end:article_2020]


# --8<-- [start:model]
class TinyTransformer(nn.Module):
    """Transformer 인코더 블록 몇 개와 분류 헤드로 된 모델입니다(LayerNorm, GELU, 어텐션)."""

    def __init__(self, d_model=32, nhead=4, num_layers=2, num_classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=4 * d_model,
            dropout=0.0,  # 정밀도끼리 결과를 비교하려고 무작위성을 뺍니다.
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        # norm_first=True에서는 중첩 텐서(nested tensor)를 쓸 수 없으므로 끕니다(경고 방지).
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x):
        h = self.norm(self.encoder(x))
        return self.head(h.mean(dim=1))


def make_batch(device, batch_size=8, seq_len=16, d_model=32, num_classes=10, seed=0):
    """장치에서 바로 입력 배치(x)와 정답(y)을 만듭니다. 같은 seed면 같은 배치입니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch_size, seq_len, d_model, device=device, generator=g)
    y = torch.randint(0, num_classes, (batch_size,), device=device, generator=g)
    return x, y


# --8<-- [end:model]


# --8<-- [start:slow]
def train_step_fp32(model, optimizer, x, y):
    """모든 계산을 32비트 부동소수점(fp32)으로 하는 학습 스텝입니다(느린 방식)."""
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    # .item()으로 읽지 않습니다. 매 스텝 읽으면 GPU를 기다리게 됩니다(팁 3).
    return loss.detach()


# --8<-- [end:slow]


# --8<-- [start:tf32]
def train_step_tf32(model, optimizer, x, y):
    """fp32 스텝을 돌리되 CUDA의 fp32 행렬 곱을 TF32로 계산합니다(기본값은 꺼짐, CPU는 그대로)."""
    previous = torch.get_float32_matmul_precision()
    # "high"가 TF32를 켭니다. 새 API(`torch.backends.cuda.matmul.fp32_precision = "tf32"`)로 켜면
    # 옛 API로 설정을 읽는 Lightning의 Trainer가 Ampere 이후 GPU에서 RuntimeError로 멈춥니다.
    torch.set_float32_matmul_precision("high")
    try:
        return train_step_fp32(model, optimizer, x, y)
    finally:
        torch.set_float32_matmul_precision(previous)


# --8<-- [end:tf32]


# --8<-- [start:fast]
def train_step_bf16(model, optimizer, x, y):
    """bf16 자동 혼합 정밀도: 행렬 곱 같은 연산만 bfloat16으로 계산합니다.

    가중치와 옵티마이저 상태는 fp32 그대로입니다. bf16은 fp32와 지수 범위가 같아서
    작은 변화도가 0으로 사라지지 않으므로 GradScaler가 필요 없습니다.
    """
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(x.device.type, dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()


def make_grad_scaler(device_type="cuda"):
    """fp16 학습 전체에 하나만 만듭니다. 배율을 스텝 사이에 기억합니다."""
    return torch.amp.GradScaler(device_type)


def train_step_fp16(model, optimizer, x, y, scaler):
    """fp16 자동 혼합 정밀도: 작은 변화도가 0이 되지 않게 GradScaler로 손실의 배율을 조절합니다.

    scaler는 스텝 사이에 배율을 기억하므로 make_grad_scaler()로 하나만 만들어 계속 넘깁니다.
    """
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(x.device.type, dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()  # 배율을 곱한 손실로 역전파합니다.
    scaler.step(optimizer)  # 변화도를 나눠 되돌리고, inf나 NaN이 있으면 이 스텝을 건너뜁니다.
    scaler.update()  # 건너뛰었으면 배율을 줄이고, 한동안 문제가 없으면 키웁니다.
    return loss.detach()  # 배율을 곱하기 전의 손실입니다.


# --8<-- [end:fast]


# --8<-- [start:memory]
def peak_memory_of(step_fn, *args, **kwargs):
    """step_fn 한 번이 쓰는 GPU 메모리의 최고점(바이트)을 잽니다. CUDA에서만 동작합니다."""
    if not torch.cuda.is_available():
        raise SystemExit(
            "이 예제는 CUDA GPU가 필요합니다. 최고 메모리 사용량은 "
            "torch.cuda의 메모리 통계로만 잴 수 있습니다."
        )
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step_fn(*args, **kwargs)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


# --8<-- [end:memory]


# --8<-- [start:lightning]
class LitClassifier(L.LightningModule):
    """같은 모델을 LightningModule로 감쌌습니다. 정밀도는 Trainer가 정합니다."""

    def __init__(self, **model_kwargs):
        super().__init__()
        self.model = TinyTransformer(**model_kwargs)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def cpu_supports_bf16():
    """이 CPU가 bf16을 하드웨어로 계산하는지(AVX-512 BF16 또는 AMX) 봅니다."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in checks)


def pick_precision(accelerator):
    """Lightning의 precision을 장치에 맞게 고릅니다.

    Ampere 이후 GPU는 bf16, V100·T4·2080 Ti는 fp16, 그보다 앞선 GPU와 bf16 명령이 없는 CPU는 fp32.
    """
    if accelerator in ("cuda", "gpu"):
        major = torch.cuda.get_device_capability()[0]
        # 계산 능력 7.0 미만(P100·GTX 1080 Ti 같은 Pascal, Maxwell)에는 fp16 텐서 코어가 없습니다.
        if major < 7:
            return "32-true"
        return "16-mixed" if major < 8 else "bf16-mixed"
    # AVX-512 BF16이나 AMX가 없는 CPU에서 bf16은 dtype 변환만 늘어 fp32보다 느립니다.
    return "bf16-mixed" if cpu_supports_bf16() else "32-true"


def fit_mixed_precision(accelerator="cpu", precision=None, max_steps=5, num_samples=64):
    x, y = make_batch("cpu", batch_size=num_samples)
    trainer = L.Trainer(
        accelerator=accelerator,
        devices=1,
        precision=precision or pick_precision(accelerator),
        max_steps=max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = LitClassifier()
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=16))
    return trainer


# --8<-- [end:lightning]

# 정밀도 이름과 학습 스텝 함수입니다. fp16만 GradScaler를 더 받습니다.
STEPS = {
    "fp32": train_step_fp32,
    "tf32": train_step_tf32,
    "fp16": train_step_fp16,
    "bf16": train_step_bf16,
}

# main()이 시연하는 크기입니다. 작으면 dtype 변환 같은 고정 비용이 시간을 정해서 bf16의 효과가
# 보이지 않으므로, CPU에서도 계층 4개, d_model 256으로 잡습니다.
DEMO_SIZE = {"d_model": 256, "nhead": 8, "num_layers": 4, "batch_size": 8, "seq_len": 128}


def make_inputs(device, d_model=16, nhead=2, num_layers=1, batch_size=4, seq_len=8,
                num_classes=10, seed=0):  # fmt: skip
    """(모델, x, y)를 장치에 만듭니다. 같은 seed면 가중치와 배치가 같습니다."""
    torch.manual_seed(seed)
    model = TinyTransformer(d_model, nhead, num_layers, num_classes)
    x, y = make_batch(device, batch_size, seq_len, d_model, num_classes, seed=seed)
    return model.to(device), x, y


def make_step(name, model, lr=1e-3):
    """정밀도 이름에 맞는 (step 함수, 옵티마이저)를 돌려줍니다. 네 step은 같은 인자를 받습니다."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    if name != "fp16":
        return STEPS[name], optimizer
    # GradScaler는 스텝 사이에 배율을 기억해야 하므로 하나만 만들어 모든 스텝에 넘깁니다.
    scaler = make_grad_scaler(next(model.parameters()).device.type)

    def step(model, optimizer, x, y):
        return train_step_fp16(model, optimizer, x, y, scaler)

    return step, optimizer


def cpu_supports_fp16():
    """이 CPU가 fp16 행렬 곱을 하드웨어로 계산하는지(AVX-512 FP16 또는 AMX-FP16) 봅니다."""
    if getattr(torch.cpu, "_is_amx_fp16_supported", lambda: False)():
        return True
    try:  # AVX-512 FP16을 알려 주는 torch 함수는 없어서 리눅스의 CPU 정보를 읽습니다.
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            return "avx512_fp16" in cpuinfo.read().split()
    except OSError:
        return False


def main(device="cpu", size=None):
    from torch.utils.benchmark import Timer

    device = torch.device(device)
    size = size or DEMO_SIZE
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"장치: {device} ({where}), 모델 크기: {size}")
    print("fp32는 TF32를 끈 PyTorch 기본 설정이고, tf32는 행렬 곱에만 TF32를 켠 것입니다.")
    # 16비트 명령이 없는 CPU는 느린 경로로 계산하므로, 그 시간은 보여 줄 것이 없어 재지 않습니다.
    hardware = {"bf16": cpu_supports_bf16(), "fp16": cpu_supports_fp16()}
    fp32_s = None
    for name in STEPS:
        # 정밀도마다 같은 seed로 새로 만들어 같은 가중치와 같은 배치에서 출발합니다.
        model, x, y = make_inputs(device, **size)
        step, optimizer = make_step(name, model)
        first_loss = step(model, optimizer, x, y).item()
        if device.type == "cpu" and not hardware.get(name, True):
            print(
                f"{name}: 첫 손실 {first_loss:.4f}. 이 CPU에는 {name} 명령이 없어 느린 경로로 "
                "계산하므로 시간은 재지 않습니다."
            )
            continue
        step(model, optimizer, x, y)  # 워밍업: 첫 스텝의 메모리 할당과 커널 준비를 시간에서 뺍니다.
        timer = Timer(
            "step(model, optimizer, x, y)",
            globals={"step": step, "model": model, "optimizer": optimizer, "x": x, "y": y},
        )
        seconds = timer.blocked_autorange(min_run_time=0.2).median
        fp32_s = fp32_s or seconds
        line = (
            f"{name}: 첫 손실 {first_loss:.4f}, 스텝 하나 {seconds * 1e3:.2f} ms "
            f"(fp32 대비 {fp32_s / seconds:.2f}배)"
        )
        if device.type == "cuda":
            peak = peak_memory_of(step, model, optimizer, x, y)
            line += f", 최고 메모리 {peak / 2**20:.0f} MiB"
        print(line)
    if device.type == "cpu":
        print("CPU에서 tf32는 fp32와 똑같이 계산합니다. TF32는 CUDA 텐서 코어의 형식입니다.")
        print("CPU의 bf16 속도는 AVX-512 BF16이나 AMX가 있는지, fp16 속도는 AVX-512 FP16이나")
        print("AMX-FP16이 있는지에 달려 있습니다. 없으면 느린 경로로 계산해 fp32보다 느립니다.")
        print("CPU의 숫자로 GPU의 속도를 짐작할 수는 없습니다.")
        print("차이를 보려면 CUDA GPU가 있는 컴퓨터에서 `--device cuda`로 실행하세요.")
    else:
        print("최고 메모리에는 fp32로 남는 가중치와 옵티마이저 상태가 들어 있어서")
        print(
            "16비트로 학습해도 메모리가 절반까지 줄지는 않습니다. 줄어드는 것은 주로 활성값입니다."
        )


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 6: 16비트 정밀도"))
