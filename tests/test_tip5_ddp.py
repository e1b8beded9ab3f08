"""snippets/tip5_ddp.py의 테스트: DDP(프로세스 2개, gloo)가 한 프로세스와 같은 변화도를 내는지.

DDP 테스트는 진짜 프로세스를 띄웁니다(`slow` 묶음). 두 프로세스로 하는 검사는 모두 한 번의
spawn에서 합니다(two_ranks): 프로세스마다 torch를 import하고 gloo 그룹을 만드는 데 몇 초씩 들기
때문입니다. Lightning과 torchrun은 스크립트를 프로세스마다 다시 실행하므로 pytest 프로세스 안이
아니라 하위 프로세스(subprocess)로, 하나씩 돌립니다.
"""

import functools
import os
import subprocess
import sys
from pathlib import Path

import lightning as L
import pytest
import torch

from snippets import tip5_ddp as tip5
from tests.site_build import page_quotes

REPO = Path(__file__).resolve().parents[1]
SCRIPT = "snippets/tip5_ddp.py"


def run_script(*args, timeout=60):
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


# 두 프로세스로 재는 변화도의 (batch_size, features, dtype, 허용 오차). 마지막은 main()의
# 기본값입니다.
SHAPES = {
    "float64": (6, 5, torch.float64, 1e-12),
    "float32": (12, 3, torch.float32, 1e-6),
    "main": (8, 8, torch.float32, 1e-6),
}
REAL_DDP_WORKER = tip5.ddp_worker


def all_two_rank_checks(shared, ports, rank, world_size, init_method, *main_args):
    """tip5.ddp_gradients가 띄운 프로세스 하나에서, 이 파일의 두 프로세스 검사를 차례로 합니다.
    검사마다 그룹을 새로 만들고 닫습니다. 결과는 shared 폴더에 이름별로 씁니다."""
    for name, (batch_size, features, dtype, _) in SHAPES.items():
        if name != "main":
            out = Path(shared) / name
            init = f"tcp://127.0.0.1:{ports[name]}"
            REAL_DDP_WORKER(rank, world_size, init, "cpu", features, batch_size, dtype, out)
    fsdp2_worker(rank, world_size, ports["fsdp2"], Path(shared) / "fsdp2")
    run_template(rank, world_size, ports["template"], Path(shared) / "template")
    REAL_DDP_WORKER(rank, world_size, init_method, *main_args)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """진짜 tip5.ddp_gradients(main()의 기본값)를 한 번 부르고, 그것이 띄우는 두 프로세스가 먼저
    나머지 두 프로세스 검사를 하게 합니다. 검사 이름 → 순위별 결과를 돌려줍니다."""
    shared = tmp_path_factory.mktemp("two-ranks")
    names = [*SHAPES, "fsdp2", "template"]
    for name in names:
        (shared / name).mkdir()
    ports = {name: tip5.find_free_port() for name in names}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tip5, "ddp_worker", functools.partial(all_two_rank_checks, shared, ports))
        batch_size, features, dtype, _ = SHAPES["main"]
        main = tip5.ddp_gradients(2, "cpu", features, batch_size, dtype)
    loaded = {
        name: [torch.load(shared / name / file) for file in sorted(os.listdir(shared / name))]
        for name in names
        if name != "main"
    }
    return loaded | {"main": main}


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_ddp_gradients_equal_single_process_on_the_whole_batch(two_ranks, shape):
    batch_size, features, dtype, tolerance = SHAPES[shape]
    reference = tip5.single_process_gradients(features, batch_size, dtype)
    per_rank = two_ranks[shape]
    assert len(per_rank) == 2
    for grads in per_rank:
        assert grads.keys() == reference.keys()
        for name, ref in reference.items():
            assert grads[name].dtype == dtype
            torch.testing.assert_close(grads[name], ref, rtol=tolerance, atol=tolerance)
    # all-reduce 뒤에는 모든 순위가 비트 단위까지 같은 변화도를 가집니다.
    for name in reference:
        assert torch.equal(per_rank[0][name], per_rank[1][name])


def test_one_shard_alone_gives_different_gradients():
    # 위 테스트가 빈 검사가 아님을 보입니다: 배치의 절반만으로 계산하면 변화도가 달라집니다.
    full = tip5.single_process_gradients(features=5, batch_size=6)
    half = tip5.single_process_gradients(features=5, batch_size=3)
    assert not torch.allclose(full["0.weight"], half["0.weight"])


def test_batch_must_split_evenly():
    with pytest.raises(ValueError, match="나누어떨어져야"):
        tip5.ddp_gradients(world_size=2, batch_size=7)


@pytest.mark.slow
def test_lightning_ddp_fit_runs_as_a_script():
    result = run_script(SCRIPT, "--lightning")
    assert result.returncode == 0, result.stderr[-3000:]
    # 두 프로세스가 모두 스크립트를 실행하지만 출력은 순위 0만 합니다.
    assert result.stdout.count("Lightning DDP 학습을 마쳤습니다: 프로세스 2개, 5스텝") == 1
    assert "학습 뒤 프로세스별 모델 가중치가 모두 같습니다." in result.stdout
    assert not (REPO / "lightning_logs").exists()


@pytest.mark.slow
def test_torchrun_launch_matches_single_process():
    result = run_script(
        "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", SCRIPT, "--device=cpu"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("torchrun: 장치 cpu, 프로세스 2개") == 1
    assert "한 프로세스가 배치 전체로 계산한 변화도와 같습니다" in result.stdout


def run_template(rank, world_size, port, out_dir):
    # torchrun이 넣어 주는 환경 변수를 그대로 흉내 냅니다.
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )
    torch.save(tip5.train_ddp(epochs=2), Path(out_dir) / f"rank{rank}.pt")
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR"):
        del os.environ[name]  # 같은 프로세스의 다음 검사가 이 변수들을 보지 않게 합니다.
    del os.environ["MASTER_PORT"]


@pytest.mark.slow
def test_torchrun_training_template_keeps_replicas_in_sync(two_ranks):
    weights = two_ranks["template"]
    start = {name: p.detach() for name, p in tip5.make_model().named_parameters()}
    for name, initial in start.items():
        assert torch.equal(weights[0][name], weights[1][name])
        assert not torch.equal(weights[0][name], initial)  # 실제로 학습했습니다.


def test_distributed_sampler_gives_each_rank_a_different_share():
    data = list(range(10))
    shares = [list(tip5.DistributedSampler(data, 2, rank, seed=0)) for rank in range(2)]
    assert not set(shares[0]) & set(shares[1])
    assert sorted(shares[0] + shares[1]) == data
    sampler = tip5.DistributedSampler(data, 2, 0, seed=0)
    sampler.set_epoch(1)
    assert list(sampler) != shares[0]  # set_epoch가 에폭마다 순서를 바꿉니다.


def test_ddp_syncs_buffers_every_forward_by_default():
    # 페이지의 설명: 스텝마다 오가는 것은 변화도만이 아닙니다. 버퍼(배치 정규화 통계 등)도 보냅니다.
    import torch.distributed as dist

    init = f"tcp://127.0.0.1:{tip5.find_free_port()}"
    dist.init_process_group("gloo", init_method=init, rank=0, world_size=1)
    try:
        model = tip5.DistributedDataParallel(torch.nn.BatchNorm1d(4))
        assert model.forward_sync_buffers is True
        assert model.broadcast_buffers is True  # torch 2.13 전의 이름입니다.
        del model
    finally:
        dist.destroy_process_group()


def fsdp2_worker(rank, world_size, port, out_dir):
    """프로세스 하나가 FSDP2(fully_shard)로 감싼 모델에서 자기 몫의 배치로 역전파합니다."""
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard

    init = f"tcp://127.0.0.1:{port}"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world_size)
    try:
        model = tip5.make_model()
        full = {name: tuple(p.shape) for name, p in model.named_parameters()}
        fully_shard(model)
        local = {name: tuple(p.to_local().shape) for name, p in model.named_parameters()}
        x, y = tip5.make_batch()
        x, y = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
        torch.nn.functional.mse_loss(model(x), y).backward()
        grads = {name: p.grad.full_tensor() for name, p in model.named_parameters()}
        torch.save({"full": full, "local": local, "grads": grads}, Path(out_dir) / f"{rank}.pt")
        # 두 프로세스가 모든 집합 통신을 마친 뒤에, 그룹을 쓰는 모델을 먼저 없애고 그룹을 닫습니다.
        # 한쪽이 먼저 닫으면 gloo의 통신 스레드가 일하는 중에 없어져 "terminate called"로
        # 멈췄습니다(CI에서 한 번).
        dist.barrier()
        del model, grads
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_fsdp2_shards_parameters_and_matches_plain_gradients(two_ranks):
    # 페이지의 FSDP 설명: 매개변수를 프로세스들에 나눠 두고, 변화도는 한 프로세스의 것과 같습니다.
    ranks = two_ranks["fsdp2"]
    reference = tip5.single_process_gradients()
    for name, shape in ranks[0]["full"].items():
        # 첫 차원을 나눠 가집니다: 각자 일부만 갖고, 합치면 원래 크기입니다.
        assert sum(r["local"][name][0] for r in ranks) == shape[0]
        assert all(r["local"][name][1:] == shape[1:] for r in ranks)
        for r in ranks:
            torch.testing.assert_close(r["grads"][name], reference[name])
    assert any(r["local"]["0.weight"][0] < ranks[0]["full"]["0.weight"][0] for r in ranks)


@pytest.mark.skipif(
    torch.cuda.device_count() >= 2, reason="CUDA GPU가 2개 미만인 컴퓨터에서만 확인합니다"
)
def test_data_parallel_without_two_gpus_stops_with_korean_message():
    found = torch.cuda.device_count()
    with pytest.raises(
        SystemExit, match=f"CUDA GPU가 필요합니다\\(2개 이상\\).*찾은 GPU는 {found}개"
    ):
        tip5.data_parallel_gradients()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="CUDA GPU가 2개 이상 필요합니다")
def test_data_parallel_gradients_equal_single_process():
    reference = tip5.single_process_gradients(features=5, batch_size=6, dtype=torch.float64)
    grads = tip5.data_parallel_gradients(features=5, batch_size=6, dtype=torch.float64)
    for name, ref in reference.items():
        torch.testing.assert_close(grads[name], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(
    torch.cuda.device_count() >= 2, reason="CUDA GPU가 2개 미만인 컴퓨터에서만 확인합니다"
)
def test_ddp_on_cuda_without_two_gpus_stops_with_korean_message():
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        tip5.main("cuda")


@pytest.mark.parametrize("article_code", [tip5.article_dp, tip5.article_ddp])
def test_article_code_fails_as_the_page_says(article_code):
    # 페이지의 최신 API 노트: distributed_backend=는 Lightning 1.5에서 없어졌습니다.
    with pytest.raises(
        TypeError, match="unexpected keyword argument 'distributed_backend'"
    ) as excinfo:
        article_code()
    assert page_quotes("tips/05-ddp.md", str(excinfo.value))


def test_dp_strategy_is_gone_from_the_trainer_since_lightning_2():
    with pytest.raises(ValueError, match="invalid strategy name") as excinfo:
        L.Trainer(strategy="dp", logger=False)
    assert page_quotes("tips/05-ddp.md", str(excinfo.value))
    # 페이지의 노트: Fabric에는 아직 "dp"가 등록되어 있습니다.
    from lightning.fabric.strategies import STRATEGY_REGISTRY

    assert "dp" in STRATEGY_REGISTRY.available_strategies()


@pytest.mark.slow
def test_main_runs_on_cpu(capsys, monkeypatch, two_ranks):
    # 프로세스를 한 번 더 띄우지 않게, DDP 부분은 two_ranks가 main()의 기본값으로 진짜
    # tip5.ddp_gradients를 불러 얻은 결과를 씁니다. 여기서는 main의 출력 흐름을 봅니다.
    monkeypatch.setattr(tip5, "ddp_gradients", lambda world_size, device_type: two_ranks["main"])
    tip5.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu, 프로세스 2개, 통신 백엔드: gloo" in out
    assert "한 프로세스가 배치 전체로 계산한 변화도와 같습니다" in out


# ---------------------------------------------------------------------------
# 분산 환경 변수: 셸에 남은 값이 어긋나면 30분을 기다리지 않고 한국어로 멈추는지
# ---------------------------------------------------------------------------

TORCHRUN_ENV = {
    "RANK": "1",
    "WORLD_SIZE": "2",
    "LOCAL_RANK": "1",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29500",
}


def test_no_distributed_variables_means_a_plain_run():
    assert tip5.launched_ranks({"PATH": "/usr/bin"}) is None


def test_torchrun_and_lightning_environments_are_accepted():
    assert tip5.launched_ranks(TORCHRUN_ENV) == (1, 2)
    # Lightning이 띄운 프로세스에는 RANK가 없고 LOCAL_RANK와 NODE_RANK가 있습니다.
    lightning_child = {**TORCHRUN_ENV, "NODE_RANK": "0"}
    del lightning_child["RANK"]
    assert tip5.launched_ranks(lightning_child) == (1, 2)


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"RANK": "0"}, "있는 변수: RANK, 없는 변수: WORLD_SIZE, MASTER_ADDR, MASTER_PORT"),
        ({"MASTER_ADDR": "10.0.0.1"}, "없는 변수: RANK, WORLD_SIZE, MASTER_PORT"),
        ({"WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "없는 변수: MASTER_ADDR, MASTER_PORT"),
        ({**TORCHRUN_ENV, "MASTER_ADDR": ""}, "없는 변수: MASTER_ADDR"),
        ({**TORCHRUN_ENV, "RANK": "one"}, "RANK에는 0 이상의 정수가 와야 합니다(지금 값: 'one')"),
        ({**TORCHRUN_ENV, "RANK": "-1"}, "RANK에는 0 이상의 정수가 와야 합니다(지금 값: '-1')"),
        ({**TORCHRUN_ENV, "WORLD_SIZE": "2.0"}, "WORLD_SIZE에는 0 이상의 정수가 와야 합니다"),
        ({**TORCHRUN_ENV, "MASTER_PORT": "http"}, "MASTER_PORT에는 0 이상의 정수가 와야 합니다"),
        (
            {**TORCHRUN_ENV, "RANK": "2"},
            "RANK는 WORLD_SIZE보다 작아야 합니다(RANK=2, WORLD_SIZE=2)",
        ),
        (
            {**TORCHRUN_ENV, "WORLD_SIZE": "0"},
            "RANK는 WORLD_SIZE보다 작아야 합니다(RANK=1, WORLD_SIZE=0)",
        ),
        ({**TORCHRUN_ENV, "RANK": "0"}, "LOCAL_RANK는 RANK(0)보다 클 수 없습니다"),
        ({**TORCHRUN_ENV, "MASTER_PORT": "70000"}, "MASTER_PORT는 1~65535 사이여야 합니다"),
    ],
)
def test_inconsistent_variables_stop_with_a_korean_message(environment, message):
    with pytest.raises(SystemExit) as stop:
        tip5.launched_ranks(environment)
    text = str(stop.value.code)
    assert message in text
    # 고치는 방법(unset할 변수 이름)도 함께 알려 줍니다.
    assert f"unset {' '.join(environment)}" in text


def run_with_environment(extra, *args, timeout=120):
    environment = {k: v for k, v in os.environ.items() if k not in TORCHRUN_ENV}
    return subprocess.run(
        [sys.executable, SCRIPT, *args],
        cwd=REPO,
        env={**environment, **extra},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("name", ["RANK", "LOCAL_RANK"])
def test_malformed_rank_stops_before_lightning_is_imported(name):
    # lightning은 import할 때 RANK를 int()로 읽어 영어 traceback을 냅니다. 그보다 먼저 멈춥니다.
    result = run_with_environment({name: "abc"}, "--lightning", timeout=30)
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"환경 변수 {name}에는 0 이상의 정수가 와야 합니다(지금 값: 'abc')" in result.stderr
    assert "Traceback" not in result.stderr


def test_stray_rank_stops_the_script_at_once():
    result = run_with_environment({"RANK": "0", "WORLD_SIZE": "2"}, "--device", "cpu")
    assert result.returncode == 1
    assert "분산 실행 환경 변수가 일부만 있습니다" in result.stderr
    assert "없는 변수: MASTER_ADDR, MASTER_PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_peer_times_out_quickly_with_a_korean_message(monkeypatch):
    # 변수는 모두 맞지만 순위 1이 오지 않는 경우: 30분이 아니라 정한 시간 안에 멈춥니다.
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(tip5.find_free_port()))
    with pytest.raises(SystemExit) as stop:
        tip5.run_under_torchrun(0, 2, "cpu", timeout_s=2)
    text = str(stop.value.code)
    assert "프로세스 그룹에 들어가지 못했습니다(순위 0, 프로세스 2개, 기다린 시간 최대 2초)" in text
    assert "원래 오류: " in text
    assert not torch.distributed.is_initialized()
