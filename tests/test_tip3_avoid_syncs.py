"""snippets/tip3_avoid_syncs.py의 테스트: 손실을 드물게 읽어도 학습과 손실이 같은지."""

import lightning as L
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from snippets import tip3_avoid_syncs as tip3
from tests.site_build import page_quotes


@pytest.mark.parametrize(("batch_size", "features"), [(1, 3), (16, 32), (64, 7)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reading_rarely_gives_the_same_losses_and_weights(batch_size, features, dtype):
    slow_model, slow_opt, batches = tip3.make_training_setup(
        "cpu", steps=8, batch_size=batch_size, features=features, dtype=dtype, seed=5
    )
    fast_model, fast_opt, same_batches = tip3.make_training_setup(
        "cpu", steps=8, batch_size=batch_size, features=features, dtype=dtype, seed=5
    )
    slow_losses = tip3.train_reading_every_step(slow_model, slow_opt, batches)
    fast_losses = tip3.train_reading_rarely(fast_model, fast_opt, same_batches)

    assert len(fast_losses) == 8 and all(isinstance(v, float) for v in fast_losses)
    assert fast_losses == slow_losses
    for a, b in zip(slow_model.parameters(), fast_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # 손실이 실제로 변해야 비교가 의미 있습니다.
    assert len(set(slow_losses)) > 1


def test_loop_without_reading_trains_the_same_weights():
    read_model, read_opt, batches = tip3.make_training_setup("cpu", steps=5, seed=2)
    quiet_model, quiet_opt, same_batches = tip3.make_training_setup("cpu", steps=5, seed=2)
    tip3.train_reading_every_step(read_model, read_opt, batches)
    tip3.train_without_reading(quiet_model, quiet_opt, same_batches)
    for a, b in zip(read_model.parameters(), quiet_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_detach_keeps_the_value_where_it_is():
    # 페이지의 검증 노트: .detach()는 데이터를 옮기지 않고 그래프에서만 떼어 냅니다.
    model, optimizer, [(x, y)] = tip3.make_training_setup("cpu", steps=1)
    loss = tip3.train_step(model, optimizer, x, y)
    detached = loss.detach()
    assert loss.requires_grad and not detached.requires_grad
    assert detached.device == loss.device
    assert detached.data_ptr() == loss.data_ptr()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_count_syncs_without_gpu_stops_with_korean_message():
    setup = tip3.make_training_setup("cpu", steps=1)
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        tip3.count_syncs(tip3.train_reading_every_step, *setup)


def test_main_runs_on_cpu(capsys):
    tip3.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert all(label in out for label in tip3.VARIANTS)


def test_to_numpy_detaches_and_copies_to_host():
    model, optimizer, [(x, y)] = tip3.make_training_setup("cpu", steps=1)
    loss = tip3.train_step(model, optimizer, x, y)
    array = tip3.to_numpy(loss)
    assert array.shape == () and float(array) == loss.item()


def test_numpy_on_a_tensor_that_requires_grad_raises_runtime_error():
    # 원문이 `.detach()`를 권하는 까닭 하나: 그래프에 달린 텐서는 .numpy()가 거절합니다.
    with pytest.raises(RuntimeError) as excinfo:
        torch.ones(2, requires_grad=True).numpy()
    assert page_quotes("tips/03-avoid-syncs.md", str(excinfo.value))


def test_numpy_on_a_non_cpu_tensor_raises_type_error():
    # CUDA와 같은 코드 경로를 meta 장치로 CPU에서 확인합니다. CUDA는 아래 테스트가 봅니다.
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        torch.ones(2, device="meta").numpy()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA 텐서가 있어야 확인할 수 있습니다")
def test_numpy_on_a_cuda_tensor_raises_type_error_quoted_on_the_page():
    loss = torch.ones((), device="cuda", requires_grad=True) * 2
    with pytest.raises(TypeError) as excinfo:
        loss.detach().numpy()
    assert page_quotes("tips/03-avoid-syncs.md", str(excinfo.value))
    assert tip3.to_numpy(loss) == 2


class LoggingRegressor(L.LightningModule):
    def __init__(self, prog_bar):
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.prog_bar = prog_bar

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, prog_bar=self.prog_bar)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


@pytest.mark.parametrize("prog_bar", [False, True])
def test_lightning_prog_bar_turns_logged_tensors_into_python_numbers(prog_bar):
    # 페이지의 Lightning 노트: prog_bar=True이면 진행 막대 값마다 텐서를 스칼라로 읽습니다.
    data = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
    trainer = L.Trainer(
        max_steps=2, logger=False, enable_checkpointing=False, enable_model_summary=False
    )
    trainer.fit(LoggingRegressor(prog_bar), DataLoader(data, batch_size=8))
    assert isinstance(trainer.callback_metrics["train_loss"], torch.Tensor)
    if prog_bar:
        assert isinstance(trainer.progress_bar_metrics["train_loss"], float)
    else:
        assert "train_loss" not in trainer.progress_bar_metrics
