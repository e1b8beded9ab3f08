"""snippets/tip4_create_on_device.py의 테스트: 빠른 방식이 느린 방식과 같은 텐서를 만드는지."""

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from snippets import tip4_create_on_device as tip4
from tests.site_build import page_quotes

SHAPES = [(1,), (3, 5), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("kind", ["rand", "zeros"])
def test_fast_equals_slow_for_filled_tensors(kind, shape, dtype):
    slow, fast = tip4.PAIRS[kind]
    torch.manual_seed(7)
    expected = slow(shape, "cpu", dtype)
    torch.manual_seed(7)
    actual = fast(shape, "cpu", dtype)
    assert actual.dtype == expected.dtype == dtype
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)


@pytest.mark.parametrize("n", [1, 17, 1000])
def test_fast_equals_slow_for_arange(n):
    slow, fast = tip4.PAIRS["arange"]
    torch.testing.assert_close(fast(n, "cpu"), slow(n, "cpu"), rtol=0, atol=0)


def test_make_inputs_fit_every_pair():
    for kind, (slow, fast) in tip4.PAIRS.items():
        args = tip4.make_inputs(kind, "cpu", size=8)
        assert slow(*args).shape == fast(*args).shape == (8,)


@pytest.mark.parametrize("article_code", [tip4.article_bad, tip4.article_good])
def test_article_code_fails_as_the_page_says(article_code):
    # 페이지의 검증 노트: 원문의 `tensor.rand`는 오타라서 NameError가 납니다.
    with pytest.raises(NameError, match="'tensor' is not defined") as excinfo:
        article_code()
    assert page_quotes("tips/04-create-on-device.md", str(excinfo.value))


def test_lightning_module_creates_noise_on_its_own_device():
    model = tip4.NoisyRegressor(features=4)
    x = torch.zeros(8, 4)
    noisy = model.add_noise(x)
    assert noisy.device == model.device and noisy.shape == x.shape
    assert not torch.equal(noisy, x)

    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, DataLoader(data, batch_size=8))
    assert trainer.global_step == 3


def test_main_runs_on_cpu(capsys):
    tip4.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert all(kind in out for kind in tip4.PAIRS)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_hard_coded_cuda_fails_where_there_is_no_cuda():
    # 페이지의 검증 노트: `.cuda()`를 박아 둔 코드는 CPU에서 바로 실패합니다.
    with pytest.raises((AssertionError, RuntimeError)):
        torch.zeros(2).cuda()
    assert tip4.rand_on_device((2,), "cpu").device.type == "cpu"
