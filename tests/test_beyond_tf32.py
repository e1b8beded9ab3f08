"""snippets/beyond_tf32.py의 테스트: 기본값, 설정을 잠깐만 바꾸는지, 옛 API와 섞을 때."""

import pytest
import torch

from snippets import beyond_tf32 as bt
from tests.site_build import page_quotes

# TF32의 가수는 10비트입니다. 상대 오차가 이보다 크면 TF32 탓이 아닙니다(CPU에서는 0입니다).
TF32_EPS = 2.0**-10
SHAPES = [(16, 4, 5, 2), (64, 8, 8, 3), (100, 3, 7, 1)]  # (n, channels, size, batch_size)


@pytest.fixture
def restore_precision():
    saved = (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision)
    yield
    torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = saved


@pytest.mark.parametrize("shape", SHAPES)
def test_tf32_matches_ieee_within_tf32_precision(shape, restore_precision):
    n, channels, size, batch_size = shape
    (a, b), (x, weight) = bt.make_inputs("cpu", n, channels, size, batch_size, seed=n)
    before = bt.fp32_settings()
    assert bt.relative_error(bt.matmul_tf32(a, b), bt.matmul_ieee(a, b)) < TF32_EPS
    assert bt.relative_error(bt.conv_tf32(x, weight), bt.conv_ieee(x, weight)) < TF32_EPS
    torch.testing.assert_close(bt.matmul_ieee(a, b), a @ b, rtol=0, atol=0)
    assert bt.fp32_settings() == before  # 각 함수는 설정을 원래대로 되돌립니다.


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_tf32_changes_nothing_on_cpu(restore_precision):
    (a, b), (x, weight) = bt.make_inputs("cpu", 32, 4, 6, 2)
    assert torch.equal(bt.matmul_tf32(a, b), bt.matmul_ieee(a, b))
    assert torch.equal(bt.conv_tf32(x, weight), bt.conv_ieee(x, weight))


def test_defaults_matmul_off_and_cudnn_convolutions_on():
    # 이 테스트 파일의 다른 테스트는 설정을 되돌려 놓으므로, 여기서 보는 것은 torch의 기본값입니다.
    assert bt.fp32_settings() == {
        "행렬 곱(cuBLAS)": "none",
        "합성곱(cuDNN)": "tf32",
        "RNN(cuDNN)": "tf32",
    }
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is True
    assert torch.get_float32_matmul_precision() == "highest"


def test_each_function_sets_its_precision_only_during_the_call(restore_precision):
    seen = []
    a = torch.randn(4, 4)

    def record(*_):
        seen.append(torch.backends.cuda.matmul.fp32_precision)

    original = torch.Tensor.__matmul__
    try:
        torch.Tensor.__matmul__ = lambda self, other: (record(), original(self, other))[1]
        bt.matmul_tf32(a, a)
        bt.matmul_ieee(a, a)
    finally:
        torch.Tensor.__matmul__ = original
    assert seen == ["tf32", "ieee"]
    assert torch.backends.cuda.matmul.fp32_precision == "none"


def test_enable_tf32_everywhere_sets_both(restore_precision):
    bt.enable_tf32_everywhere()
    assert bt.fp32_settings()["행렬 곱(cuBLAS)"] == "tf32"
    assert bt.fp32_settings()["합성곱(cuDNN)"] == "tf32"


def test_reading_the_legacy_flag_after_the_new_api_raises(restore_precision):
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    with pytest.raises(RuntimeError) as raised:
        bt.read_legacy_flag()
    message = str(raised.value)
    assert "mix of the legacy and new APIs" in message
    assert page_quotes("beyond/04-tf32.md", message)
    torch.backends.cuda.matmul.fp32_precision = "none"
    assert bt.read_legacy_flag() is False  # 기본값으로 되돌리면 다시 읽을 수 있습니다.


def test_legacy_setter_also_changes_the_cpu_matmul_setting(restore_precision):
    saved = torch.backends.mkldnn.matmul.fp32_precision
    try:
        torch.set_float32_matmul_precision("high")
        assert torch.backends.cuda.matmul.fp32_precision == "tf32"
        assert torch.backends.mkldnn.matmul.fp32_precision == "tf32"  # CPU(oneDNN)도 바뀝니다.
    finally:
        torch.set_float32_matmul_precision("highest")
        torch.backends.mkldnn.matmul.fp32_precision = saved
        torch.backends.cuda.matmul.fp32_precision = "none"


def test_main_runs_on_cpu(capsys):
    bt.main("cpu")
    out = capsys.readouterr().out
    assert "기본 설정 행렬 곱(cuBLAS): 'none'" in out
    assert "기본 설정 합성곱(cuDNN): 'tf32'" in out
    assert "상대 오차 0.0e+00" in out
