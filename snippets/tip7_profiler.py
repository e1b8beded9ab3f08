"""팁 7: 코드를 프로파일링하세요. 프로파일러(profiler)로 병목을 찾고, 고친 뒤 다시 잽니다.

실행: `python snippets/tip7_profiler.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:path_import]
from pathlib import Path

# --8<-- [end:path_import]
# --8<-- [start:lightning_import]
import lightning as L

# --8<-- [end:lightning_import]
# --8<-- [start:torch_import]
import torch

# --8<-- [end:torch_import]
# --8<-- [start:lightning_profilers_import]
from lightning.pytorch.profilers import AdvancedProfiler, PyTorchProfiler, SimpleProfiler

# --8<-- [end:lightning_profilers_import]
# --8<-- [start:profiler_imports]
from torch.profiler import ProfilerActivity, profile, record_function, schedule

# --8<-- [end:profiler_imports]
# --8<-- [start:dataset_import]
from torch.utils.data import Dataset

# --8<-- [end:dataset_import]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문(2020)의 두 가지 사용법입니다. 현재 Lightning에서는 둘 다 실패합니다.
def article_profile():
    return L.Trainer(profile=True)


def article_advanced_profiler():
    # 함수 안에서 import하므로, 모듈을 불러올 때가 아니라 이 함수를 부를 때 실패합니다.
    from pytorch_lightning.profiler import AdvancedProfiler

    profiler = AdvancedProfiler()
    return L.Trainer(profiler=profiler)


# --8<-- [end:article_2020]


# --8<-- [start:features]
# 한 샘플의 특징을 만들 때 필터를 몇 번 거는지. 병목이 잘 보이도록 일부러 무겁게 잡은 값입니다.
FEATURE_ROUNDS = 40


def expensive_features(signal, rounds=FEATURE_ROUNDS):
    """한 샘플의 특징을 계산합니다. 비선형 필터를 여러 번 거는, 일부러 무거운 전처리입니다."""
    x = signal
    for _ in range(rounds):
        x = torch.tanh(x + 0.5 * torch.roll(x, 1, dims=-1))
    return x


# --8<-- [end:features]


# --8<-- [start:slow]
class OnTheFlyDataset(Dataset):
    """샘플을 꺼낼 때마다 특징을 다시 계산합니다(느린 방식). 에폭마다 같은 계산을 되풀이합니다."""

    def __init__(self, signals, targets):
        self.signals = signals
        self.targets = targets

    def __len__(self):
        return len(self.signals)

    def __getitem__(self, index):
        # 병목: 학습 스텝마다 배치 크기만큼 이 계산이 돌고, 그동안 모델은 기다립니다.
        return expensive_features(self.signals[index]), self.targets[index]


# --8<-- [end:slow]


# --8<-- [start:fast]
class PrecomputedDataset(Dataset):
    """특징을 처음에 한 번만 계산해 두고, 꺼낼 때는 저장된 텐서를 돌려줍니다(빠른 방식)."""

    def __init__(self, signals, targets):
        # 같은 함수를 같은 입력에 한 번씩 부르므로 값은 느린 방식과 비트 단위까지 같습니다.
        self.features = torch.stack([expensive_features(signal) for signal in signals])
        self.targets = targets

    def __len__(self):
        return len(self.features)

    def __getitem__(self, index):
        return self.features[index], self.targets[index]


# --8<-- [end:fast]


# --8<-- [start:pytorch]
def profile_plain_loop(model, loader, steps=5):
    """Lightning 없이 torch.profiler로 학습 루프를 잽니다. 구간에 이름을 붙여 표에서 찾습니다."""
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)  # GPU 커널 시간도 기록합니다.
    # 첫 스텝은 건너뛰고(wait), 다음 스텝은 워밍업으로 버리고, 그 뒤 steps스텝만 기록합니다.
    plan = schedule(wait=1, warmup=1, active=steps)
    batches = iter(loader)
    with profile(activities=activities, schedule=plan) as prof:
        for _ in range(steps + 2):
            with record_function("fetch_batch"):
                x, y = next(batches)
            with record_function("train_step"):
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            prof.step()  # 스텝이 끝났다고 알려야 스케줄이 다음 칸으로 넘어갑니다.
    # prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)로 표를 봅니다.
    return prof.key_averages()


# --8<-- [end:pytorch]


# --8<-- [start:lightning]
class FeatureRegressor(L.LightningModule):
    """특징 벡터에서 값 하나를 예측하는 작은 회귀 모델입니다."""

    def __init__(self, features):
        super().__init__()
        self.layer = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


# 로거, 체크포인트, 진행 막대, 모델 요약을 끕니다. 프로파일러 보고서만 남습니다.
QUIET = dict(
    logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False
)


def profile_simple(model, loader, max_steps=5):
    # 원문의 `profile=True`는 이제 `profiler="simple"`입니다.
    # fit이 끝나면 동작(action)별 시간 표를 로그로 냅니다.
    L.Trainer(profiler="simple", max_steps=max_steps, **QUIET).fit(model, loader)


def profile_advanced(model, loader, max_steps=5):
    # cProfile로 함수 단위까지 잽니다. 몇 스텝만 돌려도 로그가 아주 길게 나옵니다.
    L.Trainer(profiler="advanced", max_steps=max_steps, **QUIET).fit(model, loader)


def profile_advanced_to_file(model, loader, dirpath, max_steps=5):
    # dirpath와 filename을 주면 보고서를 화면 대신 파일(dirpath/fit-advanced.txt)에 씁니다.
    profiler = AdvancedProfiler(dirpath=dirpath, filename="advanced")
    L.Trainer(profiler=profiler, max_steps=max_steps, **QUIET).fit(model, loader)
    return Path(dirpath) / "fit-advanced.txt"


def profile_pytorch(model, loader, dirpath, max_steps=5):
    # torch.profiler로 연산자별 CPU/CUDA 시간과 메모리를 잽니다. 기본 스케줄은 1스텝 건너뛰고,
    # 1스텝 워밍업, 3스텝 기록을 되풀이합니다. 보고서 표(fit-pytorch.txt)와 함께
    # Perfetto UI나 chrome://tracing에서 타임라인으로 여는 추적 파일(*.pt.trace.json)도 씁니다.
    profiler = PyTorchProfiler(dirpath=dirpath, filename="pytorch", profile_memory=True)
    L.Trainer(profiler=profiler, max_steps=max_steps, **QUIET).fit(model, loader)
    return Path(dirpath) / "fit-pytorch.txt"


# --8<-- [end:lightning]


# --8<-- [start:measure]
PROFILERS = {"simple": SimpleProfiler, "advanced": AdvancedProfiler, "pytorch": PyTorchProfiler}


def fit_with_profiler(profiler, dataset, max_steps, dirpath, device="cpu", batch_size=16):
    """프로파일러를 붙여 몇 스텝 학습하고, 보고서 글을 돌려줍니다(profiler=None이면 빈 문자열).

    profiler는 None, "simple", "advanced", "pytorch" 또는 프로파일러 객체입니다. 이름을 주면
    같은 프로파일러를 만들되 보고서를 화면 대신 dirpath의 파일에 쓰게 하고, 학습이 끝나면
    그 파일을 읽습니다.
    """
    device = torch.device(device)
    if isinstance(profiler, str):
        profiler = PROFILERS[profiler](dirpath=dirpath, filename=profiler)
    report_path = None
    if profiler is not None and profiler.filename:
        # Lightning은 단계 이름(fit)을 파일 이름 앞에 붙이고 이어 쓰기로 엽니다.
        # 같은 폴더를 다시 쓸 때 예전 보고서가 섞이지 않도록 먼저 지웁니다.
        report_path = Path(profiler.dirpath or dirpath) / f"fit-{profiler.filename}.txt"
        report_path.unlink(missing_ok=True)
    trainer = L.Trainer(
        profiler=profiler,
        max_steps=max_steps,
        accelerator=device.type,
        devices=[device.index or 0] if device.type == "cuda" else 1,
        default_root_dir=dirpath,
        **QUIET,
    )
    model = FeatureRegressor(features=dataset[0][0].numel())
    trainer.fit(model, torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True))
    if report_path is not None:
        return report_path.read_text(encoding="utf-8")
    return profiler.summary() if profiler is not None else ""


# --8<-- [end:measure]

# 느린 방식과 빠른 방식의 짝입니다. 테스트와 벤치마크가 이 목록을 그대로 씁니다.
DATASETS = {"slow": OnTheFlyDataset, "fast": PrecomputedDataset}

# SimpleProfiler 보고서에서 데이터를 가져오는 동작과 training_step의 이름(Lightning 2.6 기준)입니다.
FETCH_ACTION = "[_TrainingEpochLoop].train_dataloader_next"
TRAINING_STEP_ACTION = "[Strategy]SingleDeviceStrategy.training_step"


def make_signals(n=64, length=256, dtype=torch.float32, seed=0):
    """무작위 신호 n개(n, length)와 목표값(n, 1)을 만듭니다. 데이터셋은 CPU 메모리에 둡니다."""
    generator = torch.Generator().manual_seed(seed)
    signals = torch.randn(n, length, generator=generator).to(dtype)
    targets = torch.randn(n, 1, generator=generator).to(dtype)
    return signals, targets


def make_dataset(kind, n=64, length=256, dtype=torch.float32, seed=0):
    """kind="slow"(꺼낼 때마다 계산) 또는 "fast"(미리 계산) 데이터셋을 같은 신호로 만듭니다."""
    return DATASETS[kind](*make_signals(n, length, dtype, seed))


def parse_simple_report(report):
    """SimpleProfiler 보고서 표를 [(동작, 총 시간 s, 비율 %), ...]로 읽습니다(비율 큰 순서)."""
    rows = []
    for line in report.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("Action", "Total"):
            continue
        try:
            rows.append((cells[0], float(cells[3]), float(cells[4])))
        except ValueError:
            continue
    return sorted(rows, key=lambda row: row[2], reverse=True)


def action_total(rows, action):
    """보고서 행에서 한 동작의 총 시간(초)을 찾습니다. 없으면 0입니다."""
    return next((total for name, total, _ in rows if name == action), 0.0)


def main(device="cpu", max_steps=16):
    import logging
    import tempfile

    from torch.utils.benchmark import Timer

    device = torch.device(device)
    print(f"장치: {device}")
    # Lightning의 안내 로그(GPU available 등)를 잠시 끕니다. 보고서는 파일로 받습니다.
    lightning_logger = logging.getLogger("lightning.pytorch")
    old_level = lightning_logger.level
    lightning_logger.setLevel(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            slow_rows = parse_simple_report(
                fit_with_profiler("simple", make_dataset("slow"), max_steps, tmp, device)
            )
            fast_dataset = make_dataset("fast")
            # 미리 계산하는 시간(한 번만 드는 비용)은 Timer로 따로 잽니다.
            timer = Timer('make_dataset("fast")', globals={"make_dataset": make_dataset})
            precompute_s = timer.blocked_autorange(min_run_time=0.2).median
            fast_rows = parse_simple_report(
                fit_with_profiler("simple", fast_dataset, max_steps, tmp, device)
            )
    finally:
        lightning_logger.setLevel(old_level)

    print(f"느린 데이터셋(꺼낼 때마다 계산), {max_steps} 스텝, SimpleProfiler가 잰 상위 동작:")
    for name, total, share in slow_rows[:4]:
        mark = "  ← 데이터 가져오기" if name == FETCH_ACTION else ""
        print(f"  {name}: {total:.3f} s ({share:.1f}%){mark}")
    slow_fetch = action_total(slow_rows, FETCH_ACTION)
    slow_step = action_total(slow_rows, TRAINING_STEP_ACTION)
    print(
        f"데이터 가져오기가 {slow_fetch:.3f} s로, training_step({slow_step:.3f} s)보다 "
        f"{slow_fetch / max(slow_step, 1e-9):.1f}배 오래 걸렸습니다. 이것이 병목입니다."
    )
    fast_fetch = action_total(fast_rows, FETCH_ACTION)
    fast_ratio = slow_fetch / max(fast_fetch, 1e-9)
    print(
        f"특징을 미리 계산한 뒤(한 번만, {precompute_s:.3f} s) 데이터 가져오기: "
        f"{slow_fetch:.3f} s → {fast_fetch:.3f} s ({fast_ratio:.1f}배 줄었습니다)"
    )


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("팁 7: 프로파일러로 병목 찾기"))
