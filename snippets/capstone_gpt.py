"""전부 합치면: GPT-2 small 모양의 언어 모델 하나를 학습하면서 팁을 하나씩 더합니다.

모델, 데이터, 학습 루프는 평범한 PyTorch입니다. 단계(Stage)는 플래그(flag)의 묶음이고, 단계 k는
단계 k-1에서 플래그 하나(또는 한 묶음)만 바꿉니다. 플래그가 쓰이는 곳은 `stage1` … `stage10`
구역의 작은 함수라서 두 단계의 차이를 코드에서 바로 찾을 수 있습니다.

실행: `python capstone_gpt.py [--device auto|cpu|cuda] [--steps 2]`
"""

# --8<-- [start:imports]
import contextlib
import dataclasses
import math
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.benchmark import Timer
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset


# --8<-- [end:imports]
class MarkovTokens(Dataset):
    """고정된 무작위 마르코프 연쇄(Markov chain)의 토큰들. 토큰마다 다음 토큰의 후보가 몇 개뿐이고
    자주 나오는 토큰이 정해져 있어(지프 분포) 손실이 눈에 띄게 내려갑니다. 샘플 i는 늘 같습니다."""

    def __init__(self, vocab_size, seq_len, branching=8, seed=0):
        self.vocab_size, self.seq_len, self.seed = vocab_size, seq_len, seed
        g = torch.Generator().manual_seed(seed)
        popularity = 1.0 / torch.arange(1, vocab_size + 1, dtype=torch.float64)
        successors = torch.multinomial(popularity, vocab_size * branching, True, generator=g)
        self.successors = successors.view(vocab_size, branching).tolist()
        # 후보 가운데 앞의 것일수록 자주 고릅니다(누적 가중치).
        weights = [0.5**k for k in range(branching)]
        self.cum_weights = [sum(weights[: k + 1]) for k in range(branching)]

    def __len__(self):
        return 10**8  # 사실상 끝이 없습니다: 에폭 경계 없이 원하는 스텝만큼 뽑습니다.

    def __getitem__(self, index):
        # 실제 학습의 토큰화나 시퀀스 묶기(packing)처럼, 토큰마다 파이썬으로 CPU 일을 합니다.
        rng = random.Random(self.seed * 1_000_003 + index)
        token = rng.randrange(self.vocab_size)
        tokens = []
        for _ in range(self.seq_len + 1):
            tokens.append(token)
            token = rng.choices(self.successors[token], cum_weights=self.cum_weights)[0]
        tokens = torch.tensor(tokens)
        return tokens[:-1], tokens[1:]


# --8<-- [start:stages]
@dataclass(frozen=True)
class Stage:
    """학습 방법의 플래그 묶음입니다. 기본값이 기준(단계 0)입니다."""

    num_workers: int = 0  # 단계 1: DataLoader 워커
    pin_memory: bool = False  # 단계 1: 고정 메모리 + non_blocking 복사(CUDA)
    read_loss_every_step: bool = True  # 단계 2: False면 손실을 끝에 한 번만 읽습니다
    create_on_device: bool = False  # 단계 3: 마스크와 위치 텐서를 장치에서 바로 만듭니다
    tf32: bool = False  # 단계 4: fp32 행렬 곱을 TF32로(CUDA)
    bf16: bool = False  # 단계 5: bf16 autocast
    sdpa: bool = False  # 단계 6: scaled_dot_product_attention(is_causal=True)
    pad_vocab: bool = False  # 단계 7: 어휘 크기를 64의 배수로
    fused_adamw: bool = False  # 단계 8: 융합(fused) AdamW
    batch_multiplier: int = 1  # 단계 9: 아낀 메모리만큼 마이크로배치를 키웁니다
    compile: bool = False  # 단계 10: torch.compile
    checkpointing: bool = False  # 번외 실험: 활성화 체크포인팅(누적하지 않음)


def cumulative_stages(num_workers=2, batch_multiplier=2):
    """(key, 설명, Stage)의 목록입니다. 단계마다 앞 단계의 플래그를 모두 물려받습니다."""
    changes = [
        ("baseline", "기준: fp32, eager 실행, 손으로 쓴 어텐션", {}),
        ("workers", "워커 + 고정 메모리", {"num_workers": num_workers, "pin_memory": True}),
        ("no-host-reads", "매 스텝 호스트로 읽지 않기", {"read_loss_every_step": False}),
        ("create-on-device", "텐서를 장치에서 바로 만들기", {"create_on_device": True}),
        ("tf32", "fp32 행렬 곱에 TF32", {"tf32": True}),
        ("bf16", "bf16 autocast", {"bf16": True}),
        ("sdpa", "scaled_dot_product_attention", {"sdpa": True}),
        ("pad-vocab", "어휘 크기를 64의 배수로", {"pad_vocab": True}),
        ("fused-adamw", "융합(fused) AdamW", {"fused_adamw": True}),
        ("bigger-batch", "더 큰 마이크로배치", {"batch_multiplier": batch_multiplier}),
        ("compile", "torch.compile", {"compile": True}),
    ]
    stages, stage = [], Stage()
    for key, title, change in changes:
        stage = dataclasses.replace(stage, **change)
        stages.append((key, title, stage))
    return stages


# --8<-- [end:stages]
# --8<-- [start:stage1]
def make_loader(dataset, stage, device, batch_size):
    """단계 1: 워커 프로세스가 배치를 미리 만들고, GPU라면 고정 메모리에 담습니다."""
    workers, pin = stage.num_workers, stage.pin_memory and device.type == "cuda"
    return DataLoader(
        dataset, batch_size, num_workers=workers, pin_memory=pin, persistent_workers=workers > 0
    )


def to_device(batch, stage, device):
    # 고정 메모리에서의 복사만 non_blocking으로 계산과 겹칠 수 있습니다.
    return [t.to(device, non_blocking=stage.pin_memory) for t in batch]


# --8<-- [end:stage1]
# --8<-- [start:stage2]
def remember_loss(losses, loss, stage):
    """단계 2: 손실을 장치에 모아 두고 끝에 한 번 읽습니다."""
    # .item()은 GPU가 이 손실을 다 계산할 때까지 CPU를 세워 둡니다.
    losses.append(loss.item() if stage.read_loss_every_step else loss.detach())


# --8<-- [end:stage2]
# --8<-- [start:stage3]
def causal_mask(seq_len, device, stage):
    """단계 3: CPU에서 만들어 복사하지 않고 장치에서 바로 만듭니다(팁 4)."""
    if stage.create_on_device:
        return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril().to(device)


def positions(seq_len, device, stage):
    if stage.create_on_device:
        return torch.arange(seq_len, device=device)
    return torch.arange(seq_len).to(device)


# --8<-- [end:stage3]
# --8<-- [start:stage4]
@contextlib.contextmanager
def matmul_precision(stage):
    """단계 4: CUDA의 fp32 행렬 곱을 TF32 텐서 코어로 계산합니다."""
    # CUDA의 행렬 곱만 바꾸고 끝나면 되돌립니다. 프로그램 전체에 켤 때는 Lightning 등이 읽는
    # 옛 getter도 살려 두는 torch.set_float32_matmul_precision("high")를 씁니다(TF32 페이지).
    previous = torch.backends.cuda.matmul.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = "tf32" if stage.tf32 else "ieee"
    try:
        yield
    finally:
        torch.backends.cuda.matmul.fp32_precision = previous


# --8<-- [end:stage4]
# --8<-- [start:stage5]
def autocast(device, stage):
    """단계 5: 행렬 곱을 bf16으로 계산합니다. 가중치와 옵티마이저 상태는 fp32 그대로입니다."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=stage.bf16)


# --8<-- [end:stage5]
# --8<-- [start:stage6]
def attention(qkv, n_head, stage):
    """단계 6: T×T 점수 행렬을 메모리에 만들지 않고 연산을 합친 어텐션 커널을 씁니다."""
    batch, seq_len, width = qkv.size(0), qkv.size(1), qkv.size(2) // 3
    # (배치, 길이, 3·폭) → 3 × (배치, 헤드, 길이, 헤드 폭)
    q, k, v = (t.view(batch, seq_len, n_head, -1).transpose(1, 2) for t in qkv.split(width, 2))
    if stage.sdpa:  # 질의와 키의 길이가 같을 때만 is_causal=True가 맞는 마스크입니다.
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        scores = scores.masked_fill(~causal_mask(seq_len, q.device, stage), float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
    return y.transpose(1, 2).reshape(batch, seq_len, width)


# --8<-- [end:stage6]
# --8<-- [start:stage7]
def padded_vocab(vocab_size, stage, multiple=64):
    """단계 7: 50257처럼 어중간한 크기를 64의 배수로 올립니다."""
    multiple = multiple if stage.pad_vocab else 1
    return (vocab_size + multiple - 1) // multiple * multiple


# --8<-- [end:stage7]
# --8<-- [start:stage8]
def make_optimizer(model, stage, lr=1e-3):
    """단계 8: 모든 가중치의 갱신을 커널 몇 개로 합친 융합(fused) AdamW입니다."""
    # None이면 PyTorch가 고릅니다: CPU는 가중치마다 도는 for-loop, CUDA는 foreach입니다.
    return torch.optim.AdamW(model.parameters(), lr=lr, fused=True if stage.fused_adamw else None)


# --8<-- [end:stage8]
# --8<-- [start:stage9]
def micro_batch(batch_size, stage):
    """단계 9: bf16과 SDPA가 아낀 활성값 메모리에 배치를 더 담습니다."""
    return batch_size * stage.batch_multiplier


# --8<-- [end:stage9]
# --8<-- [start:stage10]
def maybe_compile(model, stage, backend="inductor"):
    """단계 10: 모델을 그래프로 잡아 연산을 합친 커널을 만듭니다."""
    if stage.compile:
        # 배치 크기를 정한 뒤(단계 9) 모양을 고정해 컴파일합니다. 첫 스텝이 컴파일입니다.
        return torch.compile(model, backend=backend, dynamic=False)
    return model


# --8<-- [end:stage10]
@dataclass
class GPTConfig:  # 기본값은 GPT-2 small(124M)입니다.
    vocab_size: int = 50257
    seq_len: int = 1024
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


class Block(nn.Module):
    def __init__(self, cfg, stage):
        super().__init__()
        width, self.n_head, self.stage = cfg.n_embd, cfg.n_head, stage
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width)
        )

    def forward(self, x):
        x = x + self.proj(attention(self.qkv(self.ln1(x)), self.n_head, self.stage))
        return x + self.mlp(self.ln2(x))


# --8<-- [start:model]
class GPT(nn.Module):
    def __init__(self, cfg, stage):
        super().__init__()
        self.cfg, self.stage = cfg, stage
        vocab = padded_vocab(cfg.vocab_size, stage)
        self.wte = nn.Embedding(vocab, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.seq_len, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg, stage) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # GPT-2처럼 입력 임베딩과 출력 가중치를 함께 씁니다.
        init_weights(self, cfg.n_layer)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(positions(idx.size(1), idx.device, self.stage))
        for block in self.blocks:
            if self.stage.checkpointing:  # 활성값을 버리고 역전파 때 다시 계산합니다.
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        # 덧붙인 어휘 자리까지 그대로 손실에 넣습니다. 정답으로는 나오지 않으므로 모델이 곧 그
        # 자리의 확률을 0에 가깝게 배웁니다. 잘라 내면 가장 큰 텐서를 통째로 한 번 더 복사합니다.
        logits = self.lm_head(self.ln_f(x))
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


# --8<-- [end:model]
def init_weights(model, n_layer):
    """GPT-2의 초기화: 잔차에 더해지는 투영은 층 수만큼 작게 시작합니다."""
    for name, p in model.named_parameters():
        if p.dim() == 2:
            std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("proj.weight") else 0.02
            nn.init.normal_(p, std=std)
        elif name.endswith("bias"):
            nn.init.zeros_(p)


class Job:
    """학습 하나: 모델, 옵티마이저, 배치가 나오는 반복자(iterator)와 그 설정입니다."""

    def __init__(self, stage, cfg, device, model, optimizer, batches, tokens_per_step):
        self.stage, self.cfg, self.device, self.model = stage, cfg, device, model
        self.optimizer, self.batches, self.tokens_per_step = optimizer, batches, tokens_per_step

    def close(self):
        self.batches = None  # 워커 프로세스를 끝냅니다.


def make_job(stage, cfg, device, batch_size, seed=0, compile_backend="inductor"):
    """같은 seed면 어느 단계든 같은 데이터로 시작합니다(어휘를 덧붙이면 초기 가중치는 다릅니다)."""
    torch.manual_seed(seed)
    model = GPT(cfg, stage).to(device)
    optimizer = make_optimizer(model, stage)
    model = maybe_compile(model, stage, compile_backend)
    batch_size = micro_batch(batch_size, stage)
    dataset = MarkovTokens(cfg.vocab_size, cfg.seq_len, seed=seed)
    batches = iter(make_loader(dataset, stage, device, batch_size))
    return Job(stage, cfg, device, model, optimizer, batches, batch_size * cfg.seq_len)


# --8<-- [start:loop]
def train_steps(job, steps):
    """학습 스텝을 steps번 하고 마지막 스텝의 손실을 돌려줍니다."""
    stage, losses = job.stage, []
    with matmul_precision(stage):
        for _ in range(steps):
            x, y = to_device(next(job.batches), stage, job.device)
            with autocast(job.device, stage):
                _, loss = job.model(x, y)
            loss.backward()
            job.optimizer.step()
            job.optimizer.zero_grad(set_to_none=True)
            remember_loss(losses, loss, stage)
    return float(losses[-1])  # 단계 2부터는 여기서 한 번만 장치를 기다립니다.


# --8<-- [end:loop]
# --8<-- [start:slow]
def train_baseline(cfg, device, batch_size, steps):
    """기준(단계 0): 팁을 하나도 쓰지 않은 학습입니다. 마지막 스텝의 손실을 돌려줍니다."""
    with contextlib.closing(make_job(Stage(), cfg, device, batch_size)) as job:
        return train_steps(job, steps)


# --8<-- [end:slow]
# --8<-- [start:fast]
def train_with_every_tip(cfg, device, batch_size, steps, num_workers=2, compile_backend="inductor"):
    """마지막 단계: 모든 팁을 더한 학습입니다. 첫 스텝에서 컴파일하느라 오래 걸립니다."""
    _, _, stage = cumulative_stages(num_workers)[-1]
    with contextlib.closing(
        make_job(stage, cfg, device, batch_size, compile_backend=compile_backend)
    ) as job:
        return train_steps(job, steps)


# --8<-- [end:fast]
def flops_per_token(cfg):
    """학습(순전파+역전파)의 토큰당 연산 수 6N + 12·L·H·Q·T (PaLM 부록 B, nanoGPT). N은 위치
    임베딩을 뺀 가중치 수로, 원래 어휘로 셉니다(덧붙인 어휘 자리의 계산은 쓸모 있는 일이 아님)."""
    d, layers = cfg.n_embd, cfg.n_layer
    per_block = 12 * d * d + 13 * d  # qkv, proj, MLP 두 층의 가중치와 편향, LayerNorm 두 개
    n = cfg.vocab_size * d + layers * per_block + 2 * d  # 임베딩(출력과 공유) + 블록 + ln_f
    return 6 * n + 12 * layers * cfg.n_head * (d // cfg.n_head) * cfg.seq_len


def mfu(tokens_per_s, cfg, peak_tflops):
    """MFU(모델 FLOPs 활용률) = 토큰/초 × 토큰당 연산 수 ÷ 최고 성능."""
    return tokens_per_s * flops_per_token(cfg) / (peak_tflops * 1e12)


def profile_steps(job, steps=2, rows=8):
    """torch.profiler로 몇 스텝을 기록하고, 자기 시간(self time)이 긴 연산의 표를 돌려줍니다."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    sort_by = "self_cpu_time_total"
    if job.device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        sort_by = "self_device_time_total"
    with torch.profiler.profile(activities=activities) as prof:
        train_steps(job, steps)  # 마지막 손실을 읽으므로 GPU가 끝날 때까지 기다립니다.
    return prof.key_averages().table(sort_by=sort_by, row_limit=rows, max_name_column_width=40)


def main(device="cpu", steps=2, compile_backend=None):
    """단계마다 새로 학습을 시작해 손실과 초당 토큰 수를 보여 주는 짧은 시연입니다."""
    device = torch.device(device)
    cuda = device.type == "cuda"
    # CPU에서는 몇 초 안에 끝나도록 아주 작은 모델을 씁니다.
    cfg, batch_size, workers = (GPTConfig(), 8, 4) if cuda else (GPTConfig(500, 32, 2, 2, 64), 4, 1)
    # CPU의 Inductor 첫 컴파일은 수십 초가 걸립니다. 시연은 그래프만 잡고(eager) 끝냅니다.
    compile_backend = compile_backend or ("inductor" if cuda else "eager")
    print(f"장치: {device}, 모델: {cfg}, 토큰당 연산 {flops_per_token(cfg) / 1e6:.1f} MFLOP")
    print(f"torch.compile backend: {compile_backend}")
    for key, title, stage in cumulative_stages(workers):
        job = make_job(stage, cfg, device, batch_size, compile_backend=compile_backend)
        loss = train_steps(job, steps)  # 워밍업(컴파일, 워커 시작)과 손실
        timer = Timer("train_steps(job, 1)", globals={"train_steps": train_steps, "job": job})
        speed = job.tokens_per_step / timer.blocked_autorange(min_run_time=0.05).median
        job.close()
        tflops = speed * flops_per_token(cfg) / 1e12
        print(f"{key:>16} {title}: 손실 {loss:.3f}, {speed:,.0f} 토큰/초, {tflops:.3g} TFLOP/s")
    print("MFU = 위의 TFLOP/s ÷ GPU의 밀집 bf16 최고 성능(사이트 '전부 합치면'의 최고 성능 표)")
    print(
        "짧게 잰 값이라 흔들립니다. 단계를 번갈아 여러 번 재는 측정은 저장소의 벤치마크가 합니다."
    )
    print("저장소를 받은 폴더에서: python -m pytest benchmarks/bench_capstone_gpt.py --benchmark")


if __name__ == "__main__":
    from _cli import make_parser, pick_device, positive_int  # 명령줄(snippets/_cli.py)

    parser = make_parser("전부 합치면: 팁을 하나씩 더한 GPT 학습")
    parser.add_argument("--steps", type=positive_int, default=2, help="단계마다 워밍업 스텝 수")
    backends = ["inductor", "aot_eager", "eager"]
    parser.add_argument(
        "--compile-backend", choices=backends, help="기본값: GPU inductor, CPU eager"
    )
    args = parser.parse_args()
    main(pick_device(args.device), args.steps, args.compile_backend)
