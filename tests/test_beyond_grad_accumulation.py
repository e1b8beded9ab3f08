"""snippets/beyond_grad_accumulation.py의 테스트: 누적한 변화도가 큰 배치의 변화도와 같은지.

DDP 부분은 진짜 CPU 프로세스 2개(gloo)를 띄웁니다. 프로세스를 띄우는 데 몇 초가 들어 한 번만
띄우고, 그 결과로 여러 가지를 확인합니다.
"""

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader

from snippets import beyond_grad_accumulation as ga

# (배치 크기, 시퀀스 길이, 특징 수, 마이크로배치 수)
SHAPES = [(8, 12, 32, 4), (6, 5, 7, 3), (4, 9, 16, 2), (12, 3, 8, 6)]
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}


def step_and_grads(step, dtype, shape, **kwargs):
    batch_size, seq_len, features, _ = shape
    model = ga.make_model(features=features, dtype=dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = ga.make_inputs(batch_size, seq_len, features, dtype=dtype)
    loss = step(model, optimizer, x, y, **kwargs)
    return ga.gradients(model), dict(model.named_parameters()), loss


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_accumulated_step_equals_large_batch(shape, dtype):
    tol = TOLERANCE[dtype]
    ref_grads, ref_params, ref_loss = step_and_grads(ga.large_batch_step, dtype, shape)
    grads, params, loss = step_and_grads(ga.accumulated_step, dtype, shape, micro_batches=shape[3])
    torch.testing.assert_close(loss, ref_loss, rtol=tol, atol=tol)
    for name, ref in ref_grads.items():
        assert grads[name].dtype == dtype
        torch.testing.assert_close(grads[name], ref, rtol=tol, atol=tol)
        # 갱신한 가중치도 같습니다(옵티마이저는 변화도만 봅니다).
        torch.testing.assert_close(params[name], ref_params[name], rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_naive_normalisation_differs_when_token_counts_differ(shape):
    ref, _, _ = step_and_grads(ga.large_batch_step, torch.float64, shape)
    naive, _, _ = step_and_grads(
        ga.accumulated_step_naive, torch.float64, shape, micro_batches=shape[3]
    )
    assert ga.max_difference(naive, ref) > 1e-4


def test_naive_normalisation_is_right_only_without_padding():
    # 패딩이 없어 마이크로배치마다 토큰 수가 같으면 평균 ÷ 개수도 맞습니다: 실수가 숨는 이유입니다.
    model = ga.make_model(features=8, dtype=torch.float64)
    x, y = ga.make_inputs(6, 5, 8, dtype=torch.float64)
    y[y == ga.IGNORE] = 0
    ga.large_batch_step(model, torch.optim.SGD(model.parameters(), lr=0.0), x, y)
    ref = ga.gradients(model)
    ga.accumulated_step_naive(model, torch.optim.SGD(model.parameters(), lr=0.0), x, y, 3)
    torch.testing.assert_close(ga.gradients(model), ref, rtol=1e-12, atol=1e-12)


def test_inputs_have_padding_and_variable_lengths():
    _, y = ga.make_inputs(8, 12)
    per_row = (y != ga.IGNORE).sum(dim=1)
    assert per_row.min() >= 1 and len(set(per_row.tolist())) > 1
    assert int(ga.count_tokens(y)) == int(per_row.sum())


def one_lightning_step(module, batches, accumulate_grad_batches=1):
    """Lightning Trainer로 옵티마이저 스텝 하나를 CPU에서 돌립니다."""
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        max_steps=1,
        accumulate_grad_batches=accumulate_grad_batches,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, DataLoader(batches, batch_size=None))


class MeanLossModule(L.LightningModule):
    """Lightning의 자동 누적에 마이크로배치의 평균 손실을 돌려주는 흔한 코드입니다."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        x, y = batch
        return ga.token_loss(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def weights_after(step, x, y, *args):
    model = ga.make_model(features=8, dtype=torch.float64)
    step(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y, *args)
    return dict(model.named_parameters())


def test_lightning_accumulate_grad_batches_divides_the_micro_batch_mean_by_k():
    # Trainer(accumulate_grad_batches=K)는 손실을 K로 나눕니다(loops/optimization/automatic.py).
    # 마이크로배치의 평균 손실을 돌려주면 "평균 ÷ K"가 되어 패딩이 있을 때 큰 배치와 다릅니다.
    k = 3
    x, y = ga.make_inputs(6, 5, 8, dtype=torch.float64)
    module = MeanLossModule(ga.make_model(features=8, dtype=torch.float64))
    one_lightning_step(module, list(zip(x.chunk(k), y.chunk(k), strict=True)), k)
    lightning = dict(module.model.named_parameters())
    naive = weights_after(ga.accumulated_step_naive, x, y, k)
    large = weights_after(ga.large_batch_step, x, y)
    for name, weight in lightning.items():
        torch.testing.assert_close(weight, naive[name], rtol=1e-12, atol=1e-12)
    assert max((lightning[n] - large[n]).abs().max().item() for n in large) > 1e-5


def test_lightning_token_accumulation_equals_the_large_batch():
    k = 3
    x, y = ga.make_inputs(6, 5, 8, dtype=torch.float64)
    module = ga.TokenAccumulation(ga.make_model(features=8, dtype=torch.float64), k)
    one_lightning_step(module, [(x, y)])
    large = weights_after(ga.large_batch_step, x, y)
    for name, weight in module.model.named_parameters():
        torch.testing.assert_close(weight, large[name], rtol=1e-12, atol=1e-12)


def micro_batches_for_ranks(x, y, k, world_size):
    """순위 r의 마이크로배치가 r, r + world_size, ... 자리에 오게 늘어놓습니다.

    Lightning은 DataLoader에 DistributedSampler(shuffle=False)를 넣어 순위 r에게 그 자리들을
    줍니다.
    그래서 순위 r은 ga.shard가 떼어 준 제 몫을 마이크로배치 K개로 받습니다.
    """
    per_rank = [ga.with_step_tokens(*ga.shard(x, y, r, world_size), k) for r in range(world_size)]
    return [per_rank[r][m] for m in range(k) for r in range(world_size)]


def test_lightning_ddp_accumulation_divides_by_the_token_total_of_all_ranks():
    # 프로세스 2개(ddp_spawn, gloo)와 accumulate_grad_batches=K로 옵티마이저 스텝 하나를 돌리면
    # 큰 배치 한 번(전체 토큰 수로 나눔)과 같은 가중치가 나와야 합니다.
    k, world_size = 3, 2
    x, y = ga.make_inputs(12, 5, 8, dtype=torch.float64)
    tokens = [int(ga.count_tokens(ga.shard(x, y, r, world_size)[1])) for r in range(world_size)]
    # 순위마다 토큰 수가 달라야, 순위별 토큰 수로 나누는 틀린 방법이 이 테스트에서 드러납니다.
    assert tokens[0] != tokens[1]
    module = ga.GlobalTokenLoss(ga.make_model(features=8, dtype=torch.float64))
    trainer = L.Trainer(
        accelerator="cpu",
        devices=world_size,
        strategy="ddp_spawn",
        max_steps=1,
        accumulate_grad_batches=k,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    data = micro_batches_for_ranks(x, y, k, world_size)
    trainer.fit(module, DataLoader(data, batch_size=None))
    large = weights_after(ga.large_batch_step, x, y)
    # ddp_spawn은 순위 0의 가중치를 이 프로세스의 모듈로 돌려줍니다.
    for name, weight in module.model.named_parameters():
        torch.testing.assert_close(weight, large[name], rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def ddp_reports():
    config = {
        "model": {"features": 16, "hidden": 32, "vocab": 8, "dtype": torch.float64},
        "inputs": {
            "batch_size": 8,
            "seq_len": 6,
            "features": 16,
            "vocab": 8,
            "dtype": torch.float64,
        },  # fmt: skip
        "micro_batches": 2,
        "steps": 2,
        "variants": list(ga.DDP_STEPS),
    }
    return config, ga.run_ddp(config)


@pytest.mark.slow
def test_ddp_accumulation_equals_single_process_large_batch(ddp_reports):
    config, per_rank = ddp_reports
    model = ga.make_model(**config["model"])
    x, y = ga.make_inputs(**config["inputs"])
    ga.large_batch_step(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    reference = ga.gradients(model)
    for report in per_rank:
        for name in ga.DDP_STEPS:
            grads = report[name]["grads"]
            for name, ref in reference.items():
                torch.testing.assert_close(grads[name], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_no_sync_allreduces_once_per_step(ddp_reports):
    config, per_rank = ddp_reports
    k = config["micro_batches"]
    for report in per_rank:
        every = report["every-micro-batch"]["allreduces_per_step"]
        once = report["no_sync"]["allreduces_per_step"]
        # 버킷 수 × 마이크로배치 수 대 버킷 수 × 1.
        assert once >= 1 and every == k * once
        assert report["no_sync"]["seconds_per_step"] > 0


@pytest.mark.slow
def test_no_sync_around_backward_only_saves_nothing(ddp_reports):
    # 페이지의 함정: 순전파를 no_sync() 밖에서 하면 매 마이크로배치마다 all-reduce합니다.
    _, per_rank = ddp_reports
    for report in per_rank:
        late = report["no_sync-backward-only"]["allreduces_per_step"]
        assert late == report["every-micro-batch"]["allreduces_per_step"]


@pytest.mark.slow
def test_main_runs_on_cpu(capsys, monkeypatch, ddp_reports):
    # 프로세스를 한 번 더 띄우지 않게, DDP 부분은 위에서 띄운 프로세스들의 결과를 씁니다.
    # run_ddp는 ddp_reports가 실제로 실행했습니다. 여기서는 main의 출력 흐름만 봅니다.
    config, per_rank = ddp_reports
    monkeypatch.setattr(ga, "run_ddp", lambda _config: per_rank)
    ga.main("cpu", micro_batches=config["micro_batches"])
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "변화도 누적: 큰 배치 한 번과의 변화도 최대 차이" in out
    assert "스텝당 all-reduce 2번" in out and "스텝당 all-reduce 1번" in out
