"""docs/api-changes.md(2020 → 현재 API 표)의 줄 가운데 스니펫에 코드가 없는 줄의 테스트입니다.

줄마다 옛 API와 새 API를 CPU에서 실제로 불러, 표가 말하는 대로(경고, TypeError, 같은 설정) 되는지
봅니다. 원문의 코드를 담은 줄은 그 스니펫의 테스트(test_tip4·5·6·7)가 확인합니다.
"""

from __future__ import annotations

import re
import socket
import warnings

import lightning as L
import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset

from tests.site_build import ROOT

PAGE = ROOT / "docs" / "api-changes.md"
QUIET = dict(
    logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False
)


def test_the_table_names_the_installed_versions():
    # 표가 "PyTorch 2.13과 Lightning 2.6.6에서 확인했습니다"라고 적은 버전이 설치된 버전입니다.
    text = PAGE.read_text(encoding="utf-8")
    torch_version, lightning_version = re.search(
        r"PyTorch (\d+\.\d+)과 Lightning (\d+\.\d+\.\d+)에서\s+확인했습니다", text
    ).groups()
    assert torch.__version__.startswith(torch_version + ".")
    assert L.__version__ == lightning_version


def test_trainer_gpus_argument_is_gone():
    with pytest.raises(TypeError, match="unexpected keyword argument 'gpus'"):
        L.Trainer(gpus=1, **QUIET)
    assert L.Trainer(accelerator="cpu", devices=1, **QUIET).num_devices == 1


def test_trainer_amp_backend_argument_is_gone():
    with pytest.raises(TypeError, match="unexpected keyword argument 'amp_backend'"):
        L.Trainer(amp_backend="apex", **QUIET)


def test_pytorch_lightning_and_lightning_classes_do_not_mix():
    pl = pytest.importorskip("pytorch_lightning")
    assert pl.Trainer is not L.Trainer and pl.LightningModule is not L.LightningModule

    class OldStyle(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    loader = DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2)
    with pytest.raises(TypeError, match="must be a `LightningModule`"):
        L.Trainer(max_steps=1, **QUIET).fit(OldStyle(), loader)


def caught(call):
    """call()이 낸 경고를 (종류, 메시지) 목록으로 돌려줍니다."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in record]


def test_cuda_amp_autocast_is_deprecated_for_torch_autocast():
    _, old = caught(lambda: torch.cuda.amp.autocast())
    assert (FutureWarning, "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.") in old  # fmt: skip
    _, new = caught(lambda: torch.autocast("cuda", dtype=torch.bfloat16))
    assert not [message for category, message in new if category is FutureWarning]


def test_cuda_amp_grad_scaler_is_deprecated_for_torch_amp():
    old_scaler, old = caught(lambda: torch.cuda.amp.GradScaler())
    assert any(
        category is FutureWarning and "torch.amp.GradScaler('cuda', args...)" in message
        for category, message in old
    )
    new_scaler, new = caught(lambda: torch.amp.GradScaler("cuda"))
    assert not [message for category, message in new if category is FutureWarning]
    assert isinstance(old_scaler, torch.amp.GradScaler) and isinstance(
        new_scaler, torch.amp.GradScaler
    )


@pytest.fixture
def restore_matmul_precision():
    legacy = torch.get_float32_matmul_precision()
    flags = (torch.backends, torch.backends.cuda.matmul, torch.backends.mkldnn.matmul)
    saved = [flag.fp32_precision for flag in flags]
    yield
    torch.set_float32_matmul_precision(legacy)
    for flag, value in zip(flags, saved, strict=True):
        flag.fp32_precision = value


@pytest.mark.parametrize(
    ("line", "legacy_reader_works"),
    [
        ("torch.backends.cuda.matmul.allow_tf32 = True", True),
        ('torch.set_float32_matmul_precision("high")', True),
        ('torch.backends.cuda.matmul.fp32_precision = "tf32"', False),
    ],
)
def test_tf32_lines_and_which_ones_keep_the_legacy_reader_working(
    line, legacy_reader_works, restore_matmul_precision
):
    torch.set_float32_matmul_precision("highest")
    exec(line, {"torch": torch})
    # 세 줄 모두 CUDA 행렬 곱을 TF32로 바꿉니다.
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    # Lightning의 Trainer가 읽는 옛 getter는 새 API 한 줄 뒤에만 오류를 냅니다(팁 6의 테스트가
    # Lightning의 검사 자체를 돌려 봅니다).
    if legacy_reader_works:
        assert torch.get_float32_matmul_precision() == "high"
    else:
        with pytest.raises(RuntimeError, match="mix of the legacy and new APIs"):
            torch.get_float32_matmul_precision()


def test_checkpoint_without_use_reentrant_warns_and_falls_back():
    x = torch.randn(4, requires_grad=True)
    y, old = caught(lambda: checkpoint(torch.sin, x))
    messages = [message for category, message in old if category is UserWarning]
    assert any("use_reentrant parameter should be passed explicitly" in m for m in messages)
    # 경고만 내고 옛 방식(use_reentrant=True)으로 계산합니다: 오류가 아닙니다.
    assert y.grad_fn is not None and "CheckpointFunction" in type(y.grad_fn).__name__
    z, new = caught(lambda: checkpoint(torch.sin, x, use_reentrant=False))
    assert not [m for _, m in new if "use_reentrant" in m]
    torch.testing.assert_close(y, z)


@pytest.fixture
def one_process_group():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_ddp_broadcast_buffers_is_renamed_forward_sync_buffers(one_process_group):
    old, old_warnings = caught(
        lambda: DistributedDataParallel(torch.nn.BatchNorm1d(4), broadcast_buffers=False)
    )
    assert any(
        category is FutureWarning
        and "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead." in message
        for category, message in old_warnings
    )
    new, new_warnings = caught(
        lambda: DistributedDataParallel(torch.nn.BatchNorm1d(4), forward_sync_buffers=False)
    )
    assert not [m for category, m in new_warnings if category is FutureWarning]
    # 둘 다 순전파마다 버퍼를 보내지 않습니다. 옛 이름은 같은 값을 가리키는 속성으로 남았습니다.
    assert old.forward_sync_buffers is False and new.forward_sync_buffers is False
    assert new.broadcast_buffers is False
    del old, new


def test_data_parallel_docs_recommend_ddp():
    doc = " ".join(torch.nn.DataParallel.__doc__.split())
    assert "It is recommended to use :class:`~torch.nn.parallel.DistributedDataParallel`" in doc
