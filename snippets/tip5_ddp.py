"""팁 5: 여러 GPU로 학습할 때는 DataParallel(DP) 대신 DistributedDataParallel(DDP)을 씁니다.

실행:
    `python snippets/tip5_ddp.py [--device auto|cpu|cuda]`  (프로세스 2개로 DDP 변화도 확인)
    `python snippets/tip5_ddp.py --lightning`  (Lightning의 strategy="ddp"로 짧게 학습)
    `torchrun --standalone --nproc_per_node=2 snippets/tip5_ddp.py`  (torchrun이 프로세스를 띄움)
"""

import os

# lightning은 import할 때 RANK(없으면 LOCAL_RANK)를 int()로 읽어, 숫자가 아니면 영어 traceback으로
# 멈춥니다. 스크립트로 실행할 때는 그보다 먼저 한국어로 알립니다(import할 때는 하는 일이 없습니다).
if __name__ == "__main__":
    for name in ("RANK", "LOCAL_RANK"):
        if not os.environ.get(name, "0").isdecimal():
            raise SystemExit(
                f"환경 변수 {name}에는 0 이상의 정수가 와야 합니다(지금 값: {os.environ[name]!r}). "
                f"torchrun으로 실행하거나, 셸에 남은 값이면 지우고(unset {name}) 다시 실행하세요."
            )

# --8<-- [start:imports]
# --8<-- [start:os_import]
import os

# --8<-- [end:os_import]
# --8<-- [start:spawn_std_imports]
import socket
import tempfile
from pathlib import Path

# --8<-- [end:spawn_std_imports]
# --8<-- [start:lightning_import]
import lightning as L

# --8<-- [end:lightning_import]
# --8<-- [start:torch_imports]
import torch
import torch.distributed as dist

# --8<-- [end:torch_imports]
# --8<-- [start:spawn_import]
import torch.multiprocessing as mp

# --8<-- [end:spawn_import]
# --8<-- [start:ddp_imports]
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

# --8<-- [end:ddp_imports]
# --8<-- [end:imports]


# --8<-- [start:article_2020]
# 원문(2020)의 Lightning 코드입니다. 현재 Lightning 2.x에서는 둘 다 TypeError로 멈춥니다.
def article_dp():
    return L.Trainer(distributed_backend="dp", gpus=8)


def article_ddp():
    return L.Trainer(distributed_backend="ddp", gpus=8)


# --8<-- [end:article_2020]


# --8<-- [start:setup]
def make_model(features=8, hidden=16, dtype=torch.float32, seed=0):
    """작은 MLP를 만듭니다. 시드가 같으면 어느 프로세스에서 만들어도 가중치가 같습니다."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(features, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, 1),
    )
    return model.to(dtype)


def make_batch(batch_size=8, features=8, dtype=torch.float32, seed=1):
    """입력과 정답 한 배치를 CPU에 만듭니다. 시드가 같으면 모든 프로세스가 같은 배치를 얻습니다."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, features, generator=generator, dtype=dtype)
    y = torch.randn(batch_size, 1, generator=generator, dtype=dtype)
    return x, y


def single_process_gradients(features=8, batch_size=8, dtype=torch.float32, device="cpu"):
    """한 프로세스가 배치 전체로 손실을 계산했을 때의 변화도(gradient)입니다. 비교의 기준입니다."""
    model = make_model(features, dtype=dtype).to(device)
    x, y = make_batch(batch_size, features, dtype)
    loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
    loss.backward()
    return {name: p.grad.detach().cpu() for name, p in model.named_parameters()}


# --8<-- [end:setup]


# --8<-- [start:slow]
def data_parallel_gradients(features=8, batch_size=8, dtype=torch.float32):
    """DataParallel: 한 프로세스가 매 순전파마다 모델을 모든 GPU에 복제합니다(느린 방식)."""
    found = torch.cuda.device_count()
    if found < 2:
        # GPU가 하나뿐이거나 없으면 DataParallel은 모듈을 그냥 호출할 뿐이라 비교할 것이 없습니다.
        raise SystemExit(
            f"이 예제는 CUDA GPU가 필요합니다(2개 이상). 이 컴퓨터에서 찾은 GPU는 {found}개입니다."
        )
    model = torch.nn.DataParallel(make_model(features, dtype=dtype).to("cuda:0"))
    x, y = make_batch(batch_size, features, dtype)
    # 배치는 GPU 0에 올리면 DataParallel이 GPU 수만큼 나눠(scatter) 보내고 출력을 GPU 0에 모읍니다.
    loss = torch.nn.functional.mse_loss(model(x.to("cuda:0")), y.to("cuda:0"))
    loss.backward()
    return {name: p.grad.detach().cpu() for name, p in model.module.named_parameters()}


# --8<-- [end:slow]


# --8<-- [start:fast]
def ddp_train_step(rank, world_size, device_type, features, batch_size, dtype):
    """DDP로 학습 스텝 하나를 돌고 변화도를 돌려줍니다. 모든 프로세스가 같은 코드를 실행합니다."""
    # 한 대의 컴퓨터(노드)에서는 순위(rank)가 곧 GPU 번호입니다.
    device = torch.device("cuda", rank) if device_type == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    # 모델은 처음 한 번만 장치에 올립니다. DDP는 만들 때 순위 0의 가중치를 모두에게 보냅니다.
    model = make_model(features, dtype=dtype).to(device)
    ddp_model = DistributedDataParallel(model, device_ids=[rank] if device.type == "cuda" else None)
    # 각 프로세스는 배치의 자기 몫만 봅니다(DistributedSampler가 하는 일과 같습니다).
    x, y = make_batch(batch_size, features, dtype)
    x, y = x.chunk(world_size)[rank].to(device), y.chunk(world_size)[rank].to(device)
    loss = torch.nn.functional.mse_loss(ddp_model(x), y)
    # backward 도중에 변화도를 버킷 단위로 all-reduce(평균)합니다. 그래서 모든 프로세스가
    # 같은 변화도를 가집니다.
    loss.backward()
    return {name: p.grad.detach().cpu() for name, p in model.named_parameters()}


def ddp_worker(rank, world_size, init_method, device_type, features, batch_size, dtype, out_dir):
    """프로세스 하나(GPU 하나)의 일생: 프로세스 그룹에 들어가고, 학습하고, 그룹을 닫습니다."""
    backend = "nccl" if device_type == "cuda" else "gloo"
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world_size)
    try:
        # DDP 모델은 ddp_train_step 안에서만 살게 합니다. 프로세스 그룹을 닫기 전에 모델이
        # 먼저 사라져야 gloo의 통신 스레드가 정리될 때 멈추지(교착) 않습니다.
        grads = ddp_train_step(rank, world_size, device_type, features, batch_size, dtype)
        if out_dir is not None:
            torch.save(grads, Path(out_dir) / f"rank{rank}.pt")
        return grads
    finally:
        dist.destroy_process_group()


def find_free_port():
    """운영체제에게 비어 있는 TCP 포트 하나를 받습니다(포트 0에 bind하면 골라 줍니다)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ddp_gradients(world_size=2, device_type="cpu", features=8, batch_size=8, dtype=torch.float32):
    """프로세스 world_size개를 띄워 DDP로 스텝 하나를 돌리고, 순위별 변화도 목록을 돌려줍니다."""
    if batch_size % world_size:
        raise ValueError(
            f"batch_size({batch_size})가 world_size({world_size})로 나누어떨어져야 합니다."
        )
    init_method = f"tcp://127.0.0.1:{find_free_port()}"
    with tempfile.TemporaryDirectory() as out_dir:
        args = (world_size, init_method, device_type, features, batch_size, dtype, out_dir)
        # spawn은 각 프로세스에게 순위(0, 1, ...)를 첫 인자로 넘깁니다.
        mp.spawn(ddp_worker, args=args, nprocs=world_size, join=True)
        return [torch.load(Path(out_dir) / f"rank{rank}.pt") for rank in range(world_size)]


# --8<-- [end:fast]


# --8<-- [start:train]
def train_epochs(device, epochs=2, batch_size=8, features=8, samples=64):
    """DDP 학습 루프입니다. DDP 모델은 이 함수 안에서만 살고, 돌아오기 전에 사라집니다."""
    model = make_model(features).to(device)
    ids = [device.index] if device.type == "cuda" else None
    ddp_model = DistributedDataParallel(model, device_ids=ids)
    generator = torch.Generator().manual_seed(0)  # 모든 프로세스가 같은 데이터셋을 만듭니다.
    data = TensorDataset(
        torch.randn(samples, features, generator=generator),
        torch.randn(samples, 1, generator=generator),
    )
    # 각 프로세스는 데이터셋의 서로 다른 1/world_size만 읽습니다.
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)  # 부르지 않으면 에폭마다 같은 순서로 섞입니다.
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = torch.nn.functional.mse_loss(ddp_model(x), y)
            optimizer.zero_grad()
            loss.backward()  # 변화도 all-reduce가 여기서 계산과 겹쳐 일어납니다.
            optimizer.step()
    return {name: p.detach().cpu() for name, p in model.named_parameters()}


def train_ddp(epochs=2, batch_size=8, features=8):
    """torchrun이 띄운 프로세스마다 실행합니다. 주소, 순위, 프로세스 수는 환경 변수로 받습니다."""
    use_cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")  # init_method="env://"
    try:
        device = torch.device("cpu")
        if use_cuda:
            device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
            torch.cuda.set_device(device)  # 이 프로세스의 기본 GPU를 정합니다.
        return train_epochs(device, epochs, batch_size, features)
    finally:
        dist.destroy_process_group()


# --8<-- [end:train]


# --8<-- [start:lightning]
class TinyRegressor(L.LightningModule):
    """작은 회귀 모델입니다. DDP를 위해 모델 코드에서 바꿀 것은 없습니다."""

    def __init__(self, features=8, hidden=16):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_with_ddp(accelerator="cpu", devices=2, max_steps=5, features=8):
    """Trainer가 프로세스를 devices개 띄우고, 각 프로세스에 데이터의 다른 몫을 나눠 줍니다."""
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, features), torch.randn(64, 1))
    trainer = L.Trainer(
        strategy="ddp",
        accelerator=accelerator,
        devices=devices,
        max_steps=max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(TinyRegressor(features), DataLoader(data, batch_size=8))
    return trainer


# --8<-- [end:lightning]


def pick_ddp_device_type(device="auto", world_size=2):
    """DDP용 장치 종류를 고릅니다. NCCL은 프로세스마다 GPU가 하나씩 있어야 합니다."""
    found = torch.cuda.device_count()
    if device == "auto":
        # GPU가 하나뿐이면 프로세스 2개가 같은 GPU를 나눠 쓸 수 없으니 CPU(gloo)로 보여 줍니다.
        return "cuda" if found >= world_size else "cpu"
    device_type = torch.device(device).type
    if device_type == "cuda" and found < world_size:
        raise SystemExit(
            f"이 예제는 CUDA GPU가 필요합니다({world_size}개 이상). "
            f"이 컴퓨터에서 찾은 GPU는 {found}개입니다."
        )
    return device_type


def compare(ddp_grads, reference):
    """DDP 변화도와 기준 변화도의 가장 큰 차이를 돌려줍니다."""
    return max((ddp_grads[name] - ref).abs().max().item() for name, ref in reference.items())


def main(device="cpu", world_size=2):
    device_type = pick_ddp_device_type(device, world_size)
    backend = "nccl" if device_type == "cuda" else "gloo"
    print(f"장치: {device_type}, 프로세스 {world_size}개, 통신 백엔드: {backend}")
    reference = single_process_gradients(device=device_type)
    per_rank = ddp_gradients(world_size, device_type)
    report(per_rank, reference)
    if device_type == "cpu":
        print(
            "DP와 DDP의 속도 비교는 CUDA GPU가 2개 이상 있어야 의미가 있어 여기서는 하지 않습니다."
        )


def report(per_rank, reference):
    """순위별 변화도가 한 프로세스의 변화도와 같은지 한국어로 출력합니다."""
    worst = max(compare(grads, reference) for grads in per_rank)
    same = all(
        torch.allclose(grads[name], ref, rtol=1e-5, atol=1e-6)
        for grads in per_rank
        for name, ref in reference.items()
    )
    verdict = "같습니다" if same else "다릅니다"
    print(
        f"DDP 변화도가 한 프로세스가 배치 전체로 계산한 변화도와 {verdict}(최대 차이 {worst:.2e})."
    )


def launched_ranks(environ):
    """torchrun(또는 Lightning)이 준 환경 변수에서 (순위, 프로세스 수)를 읽습니다. 없으면 None.

    셸에 남은 변수 몇 개만 믿고 프로세스 그룹에 들어가면, 오지 않을 프로세스를 30분 동안
    말없이 기다립니다. 그래서 값이 빠지거나 어긋나면 기다리기 전에 한국어로 멈춥니다.
    """
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    found = {name: environ[name] for name in names if name in environ}
    if not found:
        return None
    hint = (
        "torchrun으로 실행하거나, 셸에 남은 변수를 지우고(unset "
        f"{' '.join(found)}) 다시 실행하세요."
    )
    # Lightning이 띄운 프로세스에는 RANK 없이 LOCAL_RANK만 있습니다(한 대의 컴퓨터).
    missing = [n for n in ("WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if not found.get(n)]
    if "RANK" not in found and "LOCAL_RANK" not in found:
        missing.insert(0, "RANK")
    if missing:
        raise SystemExit(
            f"분산 실행 환경 변수가 일부만 있습니다. 있는 변수: {', '.join(found)}, "
            f"없는 변수: {', '.join(missing)}. {hint}"
        )
    numbers = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT"):
        if name in found:
            value = found[name]
            if not (value.isascii() and value.isdigit()):
                raise SystemExit(
                    f"{name}에는 0 이상의 정수가 와야 합니다(지금 값: {value!r}). {hint}"
                )
            numbers[name] = int(value)
    rank_name = "RANK" if "RANK" in numbers else "LOCAL_RANK"
    rank, world_size = numbers[rank_name], numbers["WORLD_SIZE"]
    if rank >= world_size:
        raise SystemExit(
            f"{rank_name}는 WORLD_SIZE보다 작아야 합니다"
            f"({rank_name}={rank}, WORLD_SIZE={world_size}). {hint}"
        )
    if numbers.get("LOCAL_RANK", 0) > rank:
        raise SystemExit(f"LOCAL_RANK는 RANK({rank})보다 클 수 없습니다. {hint}")
    if not 0 < numbers["MASTER_PORT"] < 65536:
        raise SystemExit(f"MASTER_PORT는 1~65535 사이여야 합니다. {hint}")
    return rank, world_size


def run_under_torchrun(rank, world_size, device="auto", timeout_s=60):
    """torchrun이 띄운 프로세스 안에서 실행합니다. 주소와 포트는 torchrun이 환경 변수로 줍니다."""
    from datetime import timedelta

    device_type = pick_ddp_device_type(device, world_size)
    backend = "nccl" if device_type == "cuda" else "gloo"
    try:
        # 기본 제한 시간(30분) 대신 짧게 둡니다. 다른 프로세스가 오지 않으면 곧 알립니다.
        dist.init_process_group(
            backend, rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout_s)
        )
    except RuntimeError as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise SystemExit(
            f"프로세스 그룹에 들어가지 못했습니다(순위 {rank}, 프로세스 {world_size}개, "
            f"기다린 시간 최대 {timeout_s}초). torchrun으로 띄웠는지, 다른 프로세스가 모두 "
            f"떴는지, MASTER_ADDR와 MASTER_PORT가 맞는지 확인하세요. 원래 오류: {reason}"
        ) from None
    try:
        grads = ddp_train_step(rank, world_size, device_type, 8, 8, torch.float32)
    finally:
        dist.destroy_process_group()
    if rank == 0:
        print(f"torchrun: 장치 {device_type}, 프로세스 {world_size}개")
        report([grads], single_process_gradients(device=device_type))


def replicas_in_sync(trainer):
    """학습이 끝난 뒤 프로세스마다 가진 가중치를 모아, 복제본이 서로 같은지 확인합니다."""
    params = torch.cat([p.detach().flatten() for p in trainer.lightning_module.parameters()])
    gathered = [torch.empty_like(params) for _ in range(trainer.world_size)]
    dist.all_gather(gathered, params)
    return all(torch.equal(gathered[0], other) for other in gathered[1:])


def run_lightning(device="auto", devices=2):
    """Lightning으로 DDP 학습을 짧게 돌립니다. 스크립트가 프로세스마다 다시 실행됩니다."""
    accelerator = "gpu" if pick_ddp_device_type(device, devices) == "cuda" else "cpu"
    trainer = fit_with_ddp(accelerator=accelerator, devices=devices)
    in_sync = replicas_in_sync(trainer)
    world_size, steps, is_zero = trainer.world_size, trainer.global_step, trainer.is_global_zero
    # Lightning은 gloo 프로세스 그룹을 닫지 않습니다. 열린 채 인터프리터가 끝나면 통신
    # 스레드가 정리되지 않아 가끔 "terminate called ..."로 죽으므로, 모델을 놓고 직접 닫습니다.
    del trainer
    dist.destroy_process_group()
    # 모든 프로세스가 여기까지 오지만 출력은 순위 0만 합니다.
    if is_zero:
        print(
            f"Lightning DDP 학습을 마쳤습니다: 프로세스 {world_size}개, "
            f"{steps}스텝, 장치 {accelerator}"
        )
        verdict = "모두 같습니다" if in_sync else "서로 다릅니다"
        print(f"학습 뒤 프로세스별 모델 가중치가 {verdict}.")


if __name__ == "__main__":
    from _cli import make_parser, pick_device  # 명령줄과 장치 고르기(snippets/_cli.py)

    parser = make_parser("팁 5: DataParallel 대신 DistributedDataParallel")
    parser.add_argument(
        "--lightning", action="store_true", help="Lightning의 strategy='ddp'로 학습"
    )
    options = parser.parse_args()
    device = options.device if options.device == "auto" else pick_device(options.device).type
    # torchrun이 띄웠다면 RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT가 이미 있습니다. 셸에 남은
    # 변수가 어긋나 있으면 프로세스를 기다리기 전에 여기서 멈춥니다.
    launched = launched_ranks(os.environ)
    if options.lightning:
        run_lightning(device)
    elif launched is not None:
        run_under_torchrun(*launched, device)
    else:
        main(device)
