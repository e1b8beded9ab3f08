"""snippets/tip5_ddp.py의 테스트: DDP(프로세스 2개, gloo)가 한 프로세스와 같은 변화도를 내는지.

DDP 테스트는 진짜 프로세스를 띄웁니다. Lightning과 torchrun은 스크립트를 프로세스마다 다시
실행하므로 pytest 프로세스 안이 아니라 하위 프로세스(subprocess)로 돌립니다.
"""

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


@pytest.mark.parametrize(
    ("batch_size", "features", "dtype", "tolerance"),
    [
        (6, 5, torch.float64, 1e-12),
        (12, 3, torch.float32, 1e-6),
    ],
)
def test_ddp_gradients_equal_single_process_on_the_whole_batch(
    batch_size, features, dtype, tolerance
):
    reference = tip5.single_process_gradients(features, batch_size, dtype)
    per_rank = tip5.ddp_gradients(2, "cpu", features, batch_size, dtype)
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


def test_lightning_ddp_fit_runs_as_a_script():
    result = run_script(SCRIPT, "--lightning")
    assert result.returncode == 0, result.stderr[-3000:]
    # 두 프로세스가 모두 스크립트를 실행하지만 출력은 순위 0만 합니다.
    assert result.stdout.count("Lightning DDP 학습을 마쳤습니다: 프로세스 2개, 5단계") == 1
    assert "학습 뒤 프로세스별 모델 가중치가 모두 같습니다." in result.stdout
    assert not (REPO / "lightning_logs").exists()


def test_torchrun_launch_matches_single_process():
    result = run_script(
        "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", SCRIPT, "--device=cpu"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("torchrun: 장치 cpu, 프로세스 2개") == 1
    assert "한 프로세스가 배치 전체로 계산한 변화도와 같습니다" in result.stdout


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


def test_main_runs_on_cpu(capsys):
    tip5.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu, 프로세스 2개, 통신 백엔드: gloo" in out
    assert "한 프로세스가 배치 전체로 계산한 변화도와 같습니다" in out
