"""더 나아가기: 변화도 누적(gradient accumulation)과 DDP의 `no_sync()`.

큰 배치를 작은 마이크로배치(micro-batch) 여러 개로 나눠 변화도를 더한 뒤 한 번에 갱신합니다.
손실을 바르게 나누면 큰 배치 한 번과 같은 변화도가 나옵니다. DDP에서는 마지막 마이크로배치에서만
변화도를 all-reduce하도록 `no_sync()`를 씁니다.

실행: `python snippets/beyond_grad_accumulation.py [--device auto|cpu|cuda]`
(DDP 부분은 CPU 프로세스 2개와 gloo로 보여 줍니다.)
"""

# --8<-- [start:imports]
import contextlib
import tempfile
from pathlib import Path

import lightning as L
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel
from torch.utils.benchmark import Timer

# --8<-- [end:imports]


# --8<-- [start:setup]
IGNORE = -100  # 패딩 토큰의 정답: 손실에서 뺍니다.


def make_model(features=32, hidden=64, vocab=16, dtype=torch.float32, seed=0):
    """토큰마다 다음 토큰을 고르는 작은 MLP입니다. 시드가 같으면 어느 프로세스에서나 같습니다."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, vocab)
    )
    return model.to(dtype)


def make_inputs(batch_size=8, seq_len=12, features=32, vocab=16, dtype=torch.float32, seed=1):
    """길이가 제각각인 시퀀스 배치입니다. 패딩 자리의 정답은 IGNORE라서 손실에 들어가지 않습니다."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, seq_len, features, generator=g, dtype=dtype)
    y = torch.randint(0, vocab, (batch_size, seq_len), generator=g)
    lengths = torch.randint(1, seq_len + 1, (batch_size,), generator=g)
    y[torch.arange(seq_len) >= lengths[:, None]] = IGNORE
    return x, y


def token_loss(logits, y, reduction="mean"):
    """패딩을 뺀 토큰들의 교차 엔트로피입니다. mean은 배치 안의 진짜 토큰 수로 나눕니다."""
    return F.cross_entropy(
        logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE, reduction=reduction
    )


def count_tokens(y):
    return (y != IGNORE).sum()


# --8<-- [end:setup]


# --8<-- [start:slow]
def large_batch_step(model, optimizer, x, y):
    """배치 전체를 한 번에 순전파·역전파합니다. 활성값 메모리가 배치 크기에 비례합니다."""
    optimizer.zero_grad()
    loss = token_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()


# --8<-- [end:slow]


# --8<-- [start:fast]
def accumulated_step(model, optimizer, x, y, micro_batches):
    """배치를 micro_batches개로 나눠 변화도를 더한 뒤 한 번 갱신합니다(변화도 누적).

    마이크로배치마다 평균을 내면 토큰 수가 다른 배치에서 틀립니다. 토큰 손실의 합을 배치
    전체의 토큰 수로 나눠야 큰 배치의 평균과 같아집니다.
    """
    optimizer.zero_grad()
    total_tokens = count_tokens(y)
    total_loss = torch.zeros((), device=x.device, dtype=x.dtype)
    for x_micro, y_micro in zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True):
        loss = token_loss(model(x_micro), y_micro, reduction="sum") / total_tokens
        loss.backward()  # .grad에 더해집니다. 활성값은 이 마이크로배치의 것만 남습니다.
        total_loss += loss.detach()
    optimizer.step()
    return total_loss


# --8<-- [end:fast]


# --8<-- [start:lightning]
class TokenAccumulation(L.LightningModule):
    """Lightning에서 배치 전체의 토큰 수로 나누는 변화도 누적입니다(수동 최적화).

    Trainer(accumulate_grad_batches=K)는 training_step이 돌려준 손실을 K로 나눕니다. 마이크로배치의
    평균 손실을 돌려주면 "평균 ÷ K"가 되어 패딩이 있을 때 틀립니다. 그래서 DataLoader는 큰 배치를
    주고, training_step이 마이크로배치로 나눠 변화도를 직접 더합니다(장치 하나 기준).
    """

    def __init__(self, model, micro_batches, lr=0.1):
        super().__init__()
        self.model = model
        self.micro_batches = micro_batches
        self.lr = lr
        self.automatic_optimization = False  # 누적과 갱신을 training_step에서 직접 합니다.

    def training_step(self, batch, batch_idx):
        x, y = batch
        optimizer = self.optimizers()
        optimizer.zero_grad()
        total_tokens = count_tokens(y)
        for x_micro, y_micro in zip(
            x.chunk(self.micro_batches), y.chunk(self.micro_batches), strict=True
        ):
            loss = token_loss(self.model(x_micro), y_micro, reduction="sum") / total_tokens
            self.manual_backward(loss)
        optimizer.step()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


# --8<-- [end:lightning]


# --8<-- [start:lightning_ddp]
def with_step_tokens(x, y, micro_batches):
    """한 프로세스의 배치를 마이크로배치 K개로 나누고, 각각에 이 스텝의 토큰 수를 붙입니다.

    Lightning의 자동 누적은 마이크로배치를 하나씩 training_step에 넘깁니다. 스텝 전체의 토큰 수는
    training_step 안에서는 알 수 없으므로, 배치를 만드는 쪽에서 미리 세어 함께 넘깁니다.
    """
    step_tokens = count_tokens(y)
    return [
        (x_micro, y_micro, step_tokens)
        for x_micro, y_micro in zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True)
    ]


class GlobalTokenLoss(L.LightningModule):
    """여러 GPU에서 Trainer(accumulate_grad_batches=K)를 그대로 쓸 때의 토큰 손실입니다.

    Lightning은 돌려준 손실을 K로 나누고, DDP는 변화도를 world_size로 평균합니다. 그래서 손실의
    합을 모든 프로세스·모든 마이크로배치의 토큰 수 합으로 나눈 뒤 K × world_size를 곱해 둘을
    지웁니다. 프로세스마다 제 토큰 수로 나누면 "프로세스별 평균의 평균"이 되어 패딩이 있을 때
    틀립니다.
    """

    def __init__(self, model, lr=0.1):
        super().__init__()
        self.model = model
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y, step_tokens = batch
        # 모든 프로세스의 스텝 토큰 수를 더합니다. all-reduce는 텐서를 제자리에서 바꾸므로
        # 복사본을 넘깁니다.
        total_tokens = self.trainer.strategy.reduce(step_tokens.clone(), reduce_op="sum")
        scale = self.trainer.accumulate_grad_batches * self.trainer.world_size
        return token_loss(self.model(x), y, reduction="sum") * scale / total_tokens

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


# --8<-- [end:lightning_ddp]


# --8<-- [start:pitfall]
def accumulated_step_naive(model, optimizer, x, y, micro_batches):
    """흔한 실수: 마이크로배치의 평균 손실을 micro_batches로 나눕니다.

    마이크로배치마다 토큰 수가 같을 때만 맞습니다. 패딩 길이가 다르면 토큰이 적은
    마이크로배치의 토큰 하나가 더 큰 무게를 얻어, 큰 배치와 다른 변화도가 나옵니다.
    """
    optimizer.zero_grad()
    for x_micro, y_micro in zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True):
        loss = token_loss(model(x_micro), y_micro) / micro_batches
        loss.backward()
    optimizer.step()


def ddp_accumulated_step_late_no_sync(ddp_model, optimizer, x, y, micro_batches):
    """흔한 실수: 순전파는 밖에서 하고 backward만 `no_sync()` 안에 넣었습니다.

    DDP는 all-reduce를 할지 순전파에서 정합니다. 그래서 변화도는 맞지만 매 마이크로배치마다
    all-reduce가 일어나, `no_sync()`가 아무것도 아끼지 못합니다.
    """
    world_size = dist.get_world_size()
    optimizer.zero_grad()
    total_tokens = count_tokens(y)
    dist.all_reduce(total_tokens)
    pairs = list(zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True))
    for i, (x_micro, y_micro) in enumerate(pairs):
        loss = token_loss(ddp_model(x_micro), y_micro, reduction="sum")
        last = i == len(pairs) - 1
        with contextlib.nullcontext() if last else ddp_model.no_sync():
            (loss * world_size / total_tokens).backward()
    optimizer.step()


# --8<-- [end:pitfall]


# --8<-- [start:ddp]
def ddp_accumulated_step(ddp_model, optimizer, x, y, micro_batches, skip_sync=True):
    """DDP에서 변화도를 누적합니다. skip_sync=True면 마지막 마이크로배치에서만 all-reduce합니다.

    DDP는 backward 안에서 모든 프로세스의 변화도를 평균합니다. `no_sync()` 안의 backward는
    all-reduce 없이 각 프로세스의 .grad에 더하기만 하고, 밖의 마지막 backward가 누적된 변화도를
    한 번에 평균합니다. 순전파도 `no_sync()` 안에서 해야 합니다.
    """
    world_size = dist.get_world_size()
    optimizer.zero_grad()
    # 모든 프로세스의 토큰 수를 더해 나눕니다. DDP가 변화도를 평균(÷ world_size)하므로
    # 손실에는 world_size를 곱해 둡니다.
    total_tokens = count_tokens(y)
    dist.all_reduce(total_tokens)  # 정수 합이라 순서와 상관없이 정확합니다.
    pairs = list(zip(x.chunk(micro_batches), y.chunk(micro_batches), strict=True))
    for i, (x_micro, y_micro) in enumerate(pairs):
        last = i == len(pairs) - 1
        sync = contextlib.nullcontext() if last or not skip_sync else ddp_model.no_sync()
        with sync:
            loss = token_loss(ddp_model(x_micro), y_micro, reduction="sum")
            (loss * world_size / total_tokens).backward()
    optimizer.step()


def count_allreduces(ddp_model):
    """DDP가 변화도 버킷을 all-reduce할 때마다 세는 통신 훅을 답니다.

    횟수를 담은 딕셔너리를 돌려줍니다.
    """
    counter = {"allreduces": 0}

    def hook(state, bucket):
        state["allreduces"] += 1
        return default_hooks.allreduce_hook(None, bucket)  # 기본 동작(평균 all-reduce) 그대로

    ddp_model.register_comm_hook(counter, hook)
    return counter


# --8<-- [end:ddp]


# --8<-- [start:spawn]
def shard(x, y, rank, world_size):
    """전체 배치에서 이 프로세스의 몫을 떼어 냅니다(DistributedSampler가 하는 일과 같습니다)."""
    return x.chunk(world_size)[rank], y.chunk(world_size)[rank]


DDP_STEPS = {
    "every-micro-batch": lambda *args: ddp_accumulated_step(*args, skip_sync=False),
    "no_sync": lambda *args: ddp_accumulated_step(*args, skip_sync=True),
    "no_sync-backward-only": lambda *args: ddp_accumulated_step_late_no_sync(*args),
}


def measure_ddp_variant(name, config, x, y):
    """한 방식의 첫 스텝 변화도, 스텝당 all-reduce 수, 스텝 시간을 잽니다.

    DDP 모델은 이 함수 안에서만 삽니다. 프로세스 그룹을 닫을 때 DDP가 살아 있으면 gloo의 통신
    스레드 정리가 드물게 멈춥니다(교착). 그래서 돌아오기 전에 모델과 타이머가 함께 사라지게 합니다.
    """
    model = make_model(**config["model"])
    ddp_model = DistributedDataParallel(model)
    counter = count_allreduces(ddp_model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    k = config["micro_batches"]
    DDP_STEPS[name](ddp_model, optimizer, x, y, k)  # 첫 스텝: 변화도 비교용
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    counter["allreduces"] = 0
    DDP_STEPS[name](ddp_model, optimizer, x, y, k)  # 한 스텝의 all-reduce 수를 셉니다.
    allreduces = counter["allreduces"]
    dist.barrier()
    # 모든 프로세스가 같은 횟수만큼 돌아야 all-reduce가 짝을 맞춥니다. 그래서 횟수를 스스로
    # 정하는 blocked_autorange 대신 정한 횟수를 도는 timeit을 씁니다(워밍업 2번 포함).
    timer = Timer(
        "step(m, o, x, y, k)",
        globals={"step": DDP_STEPS[name], "m": ddp_model, "o": optimizer, "x": x, "y": y, "k": k},
    )
    return {
        "grads": grads,
        "allreduces_per_step": allreduces,
        "seconds_per_step": timer.timeit(config["steps"]).median,
    }


def ddp_worker(rank, world_size, init_method, config, out_dir):
    """프로세스 하나: no_sync() 없이·있게 같은 스텝을 돌려 변화도, all-reduce 수, 시간을 잽니다."""
    torch.set_num_threads(1)  # 프로세스마다 코어 하나: 2코어에서 두 프로세스가 서로 밀어내지 않게
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    try:
        x, y = shard(*make_inputs(**config["inputs"]), rank, world_size)
        variants = config.get("variants", ["every-micro-batch", "no_sync"])
        report = {name: measure_ddp_variant(name, config, x, y) for name in variants}
        torch.save(report, Path(out_dir) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def run_ddp(config, world_size=2):
    """CPU 프로세스 world_size개를 띄워(spawn) 두 방식을 비교하고, 순위별 보고를 돌려줍니다."""
    with tempfile.TemporaryDirectory() as out_dir:
        # 프로세스들은 임시 폴더의 파일로 서로를 찾습니다(빈 포트를 찾을 필요가 없습니다).
        init_method = (Path(out_dir) / "rendezvous").as_uri()
        mp.spawn(ddp_worker, args=(world_size, init_method, config, out_dir), nprocs=world_size)
        return [torch.load(Path(out_dir) / f"rank{r}.pt") for r in range(world_size)]


def demo_config(micro_batches=4, steps=3):
    """예시 설정: 매개변수 약 105만 개(4 MiB). all-reduce 한 번이 마이크로배치 계산과 비슷합니다."""
    return {
        "model": {"features": 256, "hidden": 2048, "vocab": 256},
        "inputs": {"batch_size": 16, "seq_len": 32, "features": 256, "vocab": 256},
        "micro_batches": micro_batches,
        "steps": steps,
    }


# --8<-- [end:spawn]


def gradients(model):
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()}


def max_difference(a, b):
    return max((a[name] - b[name]).abs().max().item() for name in a)


def main(device="cpu", micro_batches=4):
    device = torch.device(device)
    print(f"장치: {device}, 마이크로배치 {micro_batches}개")
    x, y = (t.to(device) for t in make_inputs(batch_size=8, seq_len=12))
    results = {}
    for name, step in [
        ("큰 배치 한 번", lambda m, o: large_batch_step(m, o, x, y)),
        ("변화도 누적", lambda m, o: accumulated_step(m, o, x, y, micro_batches)),
        ("잘못 나눈 누적", lambda m, o: accumulated_step_naive(m, o, x, y, micro_batches)),
    ]:
        model = make_model().to(device)
        step(model, torch.optim.SGD(model.parameters(), lr=0.1))
        results[name] = gradients(model)
    reference = results.pop("큰 배치 한 번")
    for name, grads in results.items():
        print(f"{name}: 큰 배치 한 번과의 변화도 최대 차이 {max_difference(grads, reference):.2e}")

    print("DDP(CPU 프로세스 2개, gloo)에서 no_sync()를 쓰지 않을 때와 쓸 때:")
    per_rank = run_ddp(demo_config(micro_batches))
    for name, label in [
        ("every-micro-batch", "매 마이크로배치 all-reduce"),
        ("no_sync", "no_sync()"),
    ]:
        report = per_rank[0][name]
        print(
            f"  {label}: 스텝당 all-reduce {report['allreduces_per_step']:.0f}번, "
            f"스텝당 {report['seconds_per_step'] * 1e3:.1f} ms"
        )
    same = max_difference(
        per_rank[0]["no_sync"]["grads"], per_rank[0]["every-micro-batch"]["grads"]
    )
    print(f"  두 방식의 변화도 최대 차이 {same:.2e}")


if __name__ == "__main__":
    # spawn은 자식 프로세스마다 이 파일을 다시 import합니다. 이 가드가 없으면 자식이 main()을
    # 다시 실행하려다 멈춥니다.
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 9: 변화도 누적과 no_sync()"))
