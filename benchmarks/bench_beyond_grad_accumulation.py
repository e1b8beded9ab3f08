"""더 나아가기 벤치마크: 변화도 누적의 비용과 DDP `no_sync()`가 아끼는 all-reduce.

두 묶음을 잽니다.

1. accumulation: 한 프로세스에서 큰 배치 한 번(기준) vs 같은 배치를 마이크로배치로 나눠 누적.
   누적은 빨라지려고 쓰는 것이 아니라 메모리에 안 들어가는 배치를 쓰려고 씁니다. 그래서 시간의
   비용과 함께, 역전파를 위해 저장하는 활성값의 크기(saved_activation_mib)와 최대 메모리 증가를
   같은 실행에서 셉니다.
2. ddp-sync: CPU 프로세스 2개(gloo)에서 누적 스텝 하나를 매 마이크로배치 all-reduce(기준) vs
   `no_sync()`로 마지막에만 all-reduce. 천장은 통신이 아예 없는 같은 누적 스텝(DDP 없이)입니다:
   `no_sync()`는 통신을 줄일 뿐 계산은 그대로이므로 이보다 빠를 수 없습니다. 스텝당 all-reduce
   수(allreduces_per_step)는 통신 훅으로 셉니다.

DDP 프로세스는 한 번만 띄워 두고 파이프로 "스텝 하나"를 시킵니다. 그래서 프로세스를
띄우는 몇 초가 측정에 섞이지 않습니다. 파이프 왕복은 두 방식에 똑같이 들어갑니다.
"""

import multiprocessing
import socket
import sys

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from snippets import beyond_checkpointing as ck
from snippets import beyond_grad_accumulation as ga

PAGE = "grad-accumulation"

# model: make_model 인자, inputs: make_inputs 인자(전체 배치), micro_batches: 마이크로배치 수.
SIZES = {
    "quick": {
        "model": {"features": 16, "hidden": 32, "vocab": 8},
        "inputs": {"batch_size": 8, "seq_len": 4, "features": 16, "vocab": 8},
        "micro_batches": 2,
    },
    # 매개변수 약 105만 개(4 MiB): gloo all-reduce 한 번이 마이크로배치 계산과 비슷한 크기입니다.
    "cpu": {
        "model": {"features": 256, "hidden": 2048, "vocab": 256},
        "inputs": {"batch_size": 16, "seq_len": 32, "features": 256, "vocab": 256},
        "micro_batches": 4,
    },
    "cuda": {
        "model": {"features": 1024, "hidden": 8192, "vocab": 8192},
        "inputs": {"batch_size": 64, "seq_len": 256, "features": 1024, "vocab": 8192},
        "micro_batches": 4,
    },
}
WORLD_SIZE = 2
# 리눅스에서는 fork로 띄워 torch를 다시 import하는 몇 초를 아낍니다(측정에는 들어가지 않지만
# 평소 pytest가 길어집니다). 자식은 먼저 스레드를 하나로 줄이므로 fork 뒤에도 안전합니다.
# 다른 운영체제는 spawn을 씁니다.
START_METHOD = "fork" if sys.platform == "linux" else "spawn"


def saved_activation_mib(model, x, y):
    """순전파 한 번이 역전파를 위해 저장하는 활성값(MiB). 누적에서는 한 번에 마이크로배치 하나의
    그래프만 살아 있으므로 마이크로배치 하나로 잽니다. 마이크로배치는 전체 배치의 뷰라서 복사해
    넘깁니다(셈은 저장소 단위라, 뷰를 넘기면 전체 배치를 셉니다)."""
    x, y = x.clone(), y.clone()
    return ck.saved_activation_bytes(model, lambda: ga.token_loss(model(x), y)) / 2**20


def single_process_setup(size, device):
    model = ga.make_model(**size["model"]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = (t.to(device) for t in ga.make_inputs(**size["inputs"]))
    return model, optimizer, x, y


@pytest.mark.measures("accumulation")
def test_accumulation(compare, bench_device, size_key):
    size = SIZES[size_key]
    k = size["micro_batches"]
    group = None
    for variant in ("large-batch", "accumulated"):
        model, optimizer, x, y = single_process_setup(size, bench_device)
        if group is None:
            group = compare("accumulation", params={"micro_batches": k, "batch_size": len(x),
                            "seq_len": x.shape[1]}, per_call={"tokens": int(ga.count_tokens(y)),
                            "steps": 1})  # fmt: skip
        if variant == "large-batch":
            fn, args, role = ga.large_batch_step, (model, optimizer, x, y), "baseline"
        else:
            fn, args, role = ga.accumulated_step, (model, optimizer, x, y, k), "recommended"
        # 한 번에 살아 있는 그래프의 입력: 큰 배치는 전체, 누적은 마이크로배치 하나입니다.
        first = (x, y) if variant == "large-batch" else (x.chunk(k)[0], y.chunk(k)[0])
        saved = saved_activation_mib(model, *first)
        group.add(variant, fn, *args, role=role, metrics={"saved_activation_mib": saved})
    for loss in group.run().values():
        assert torch.isfinite(loss)


# --- DDP: 프로세스 2개를 한 번 띄워 두고 스텝을 시킵니다 --------------------------------------


def find_free_port():
    """이 컴퓨터에서 비어 있는 TCP 포트 번호(프로세스 묶음의 랑데부 주소)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pool_worker(rank, world_size, init_method, size, conn):
    """순위 하나: 명령을 받아 같은 누적 스텝을 돌립니다. 두 순위가 같은 명령을 받습니다."""
    torch.set_num_threads(1)  # 2코어에서 프로세스마다 코어 하나
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    ddp_model = None
    try:
        x, y = ga.shard(*ga.make_inputs(**size["inputs"]), rank, world_size)
        model = ga.make_model(**size["model"])
        ddp_model = DistributedDataParallel(model)
        counter = ga.count_allreduces(ddp_model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        plain = ga.make_model(**size["model"])
        plain_optimizer = torch.optim.SGD(plain.parameters(), lr=0.01)
        k = size["micro_batches"]
        conn.send("ready")
        while True:
            command = conn.recv()
            if command == "stop":
                break
            if command == "count":
                conn.send(counter["allreduces"])
                counter["allreduces"] = 0
                continue
            variant, steps = command
            for _ in range(steps):
                if variant == "no-ddp":
                    ga.accumulated_step(plain, plain_optimizer, x, y, k)
                else:
                    skip = variant == "no-sync"
                    ga.ddp_accumulated_step(ddp_model, optimizer, x, y, k, skip_sync=skip)
            conn.send("done")
    finally:
        del ddp_model
        dist.destroy_process_group()
        conn.close()


class DDPPool:
    """spawn으로 띄운 순위 WORLD_SIZE개에 같은 명령을 보내고 모두 끝나기를 기다립니다."""

    def __init__(self, size, world_size=WORLD_SIZE):
        context = multiprocessing.get_context(START_METHOD)
        init_method = f"tcp://127.0.0.1:{find_free_port()}"
        self.conns, self.processes = [], []
        for rank in range(world_size):
            parent, child = context.Pipe()
            process = context.Process(
                target=pool_worker, args=(rank, world_size, init_method, size, child), daemon=True
            )
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)
        for conn in self.conns:
            if not conn.poll(180) or conn.recv() != "ready":
                self.close()
                raise RuntimeError("DDP 프로세스가 준비되지 않았습니다")
        # 첫 스텝에서 DDP가 버킷을 다시 짭니다. 그 스텝은 세지도 재지도 않습니다.
        self.step("allreduce-every-micro-batch")

    def _ask(self, command):
        for conn in self.conns:
            conn.send(command)
        return [conn.recv() for conn in self.conns]

    def step(self, variant, steps=1):
        assert self._ask((variant, steps)) == ["done"] * len(self.conns)

    def allreduces_per_step(self, variant, steps=2):
        self._ask("count")  # 세던 값을 비웁니다.
        self.step(variant, steps)
        return self._ask("count")[0] / steps

    def close(self):
        for conn in self.conns:
            try:
                conn.send("stop")
            except OSError:
                pass
        for process in self.processes:
            process.join(30)
            if process.is_alive():
                process.kill()


@pytest.fixture(scope="module")
def ddp_pool(size_key):
    pool = DDPPool(SIZES[size_key])
    yield pool
    pool.close()


DDP_VARIANTS = {
    "allreduce-every-micro-batch": "baseline",
    "no-sync": "recommended",
    "no-ddp": "ceiling",
}


@pytest.mark.measures("ddp-sync")
def test_ddp_no_sync(compare, bench_device, size_key, request):
    if bench_device.type == "cuda":
        pytest.skip(
            "GPU 한 장으로는 DDP(NCCL) 프로세스 2개를 띄울 수 없어 재지 않았습니다. "
            "no_sync()가 아끼는 all-reduce는 CPU 결과(gloo, 프로세스 2개)에서 보세요."
        )
    pool = request.getfixturevalue("ddp_pool")
    size = SIZES[size_key]
    _, y = ga.make_inputs(**size["inputs"])
    group = compare("ddp-sync", params={"micro_batches": size["micro_batches"],
                    "processes": WORLD_SIZE}, per_call={"tokens": int(ga.count_tokens(y)),
                    "steps": 1})  # fmt: skip
    for variant, role in DDP_VARIANTS.items():
        metrics = {"allreduces_per_step": pool.allreduces_per_step(variant)}
        # 계산은 다른 프로세스에서 하므로 이 프로세스의 메모리는 재지 않습니다.
        group.add(variant, pool.step, variant, key=f"ddp-{variant}", role=role, metrics=metrics,
                  ceiling=None if role == "ceiling" else "ddp-no-ddp", memory=False)  # fmt: skip
    group.run()
