"""snippets/beyond_tf32.py의 테스트: 기본값, 설정을 잠깐만 바꾸는지, 옛 API로 읽는 라이브러리와
함께 쓸 때(Lightning)."""

import warnings

import pytest
import torch
from lightning.fabric.accelerators.cuda import _check_cuda_matmul_precision
from lightning.pytorch.accelerators import CUDAAccelerator

from snippets import beyond_tf32 as bt
from tests.site_build import page_quotes

# TF32의 가수는 10비트입니다. 상대 오차가 이보다 크면 TF32 탓이 아닙니다(CPU에서는 0입니다).
TF32_EPS = 2.0**-10
BF16_EPS = 2.0**-7
SHAPES = [(16, 4, 5, 2), (64, 8, 8, 3), (100, 3, 7, 1)]  # (n, channels, size, batch_size)
DEFAULTS = {
    "행렬 곱(cuBLAS)": "none",
    "합성곱(cuDNN)": "tf32",
    "RNN(cuDNN)": "tf32",
    "행렬 곱(oneDNN, CPU)": "none",
}


@pytest.fixture
def restore_precision():
    """옛 API와 새 API를 모두 기본값으로 되돌립니다.

    새 값만 "none"으로 되돌리면 옛 API의 상태(set_float32_matmul_precision이 남긴 값)가 남아 옛
    API로 읽을 때 오류가 납니다. 그래서 옛 API로 "highest"를 먼저 두고 새 값을 되돌립니다.
    """
    saved = (
        torch.backends.cuda.matmul.fp32_precision,
        torch.backends.mkldnn.matmul.fp32_precision,
        torch.backends.cudnn.conv.fp32_precision,
    )
    yield
    torch.set_float32_matmul_precision("highest")
    (
        torch.backends.cuda.matmul.fp32_precision,
        torch.backends.mkldnn.matmul.fp32_precision,
        torch.backends.cudnn.conv.fp32_precision,
    ) = saved
    assert torch.get_float32_matmul_precision() == "highest"


@pytest.fixture
def ampere_gpu(monkeypatch):
    """CPU 컴퓨터를 A100(계산 능력 8.0)이 하나 있는 컴퓨터처럼 보이게 합니다."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100 (가짜)")
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: None)
    # Lightning은 이 확인을 프로세스에서 한 번만 하도록 기억해 둡니다(lru_cache).
    _check_cuda_matmul_precision.cache_clear()
    yield torch.device("cuda", 0)
    _check_cuda_matmul_precision.cache_clear()


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
    assert bt.fp32_settings() == DEFAULTS
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is True
    assert torch.get_float32_matmul_precision() == "highest"


def test_each_function_sets_its_precision_only_during_the_call(restore_precision):
    seen = []
    a = torch.randn(4, 4)

    def record(*_):
        seen.append(
            (torch.backends.cuda.matmul.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision)
        )

    original = torch.Tensor.__matmul__
    try:
        torch.Tensor.__matmul__ = lambda self, other: (record(), original(self, other))[1]
        bt.matmul_tf32(a, a)
        bt.matmul_ieee(a, a)
        bt.matmul_cpu_bf16(a, a)
        bt.matmul_cpu_ieee(a, a)
    finally:
        torch.Tensor.__matmul__ = original
    assert seen == [("tf32", "none"), ("ieee", "none"), ("none", "bf16"), ("none", "ieee")]
    assert bt.fp32_settings() == DEFAULTS


def test_recommended_line_sets_tf32_and_keeps_the_legacy_getter_working(restore_precision):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 폐기 예정 경고 같은 것이 하나라도 나면 실패합니다.
        bt.enable_tf32()
        assert torch.backends.cuda.matmul.fp32_precision == "tf32"
        assert bt.read_legacy_precision() == "high"
        assert torch.backends.cuda.matmul.allow_tf32 is True
    # CPU(oneDNN)의 행렬 곱 설정도 함께 바뀝니다("tf32"). 합성곱의 기본값(tf32)은 그대로입니다.
    assert torch.backends.mkldnn.matmul.fp32_precision == "tf32"
    assert torch.backends.cudnn.conv.fp32_precision == "tf32"


def test_lightning_accepts_the_recommended_line_on_ampere_and_stops_on_the_new_api(
    ampere_gpu, restore_precision
):
    # Trainer는 GPU를 준비할 때 CUDAAccelerator.setup_device를 부르고, 그 안의
    # _check_cuda_matmul_precision이 Ampere 이후 GPU에서
    # torch.get_float32_matmul_precision()을 읽습니다.
    bt.enable_tf32()
    CUDAAccelerator().setup_device(ampere_gpu)  # 오류 없이 지나갑니다.

    torch.set_float32_matmul_precision("highest")
    _check_cuda_matmul_precision.cache_clear()
    bt.enable_tf32_new_api()
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs") as raised:
        CUDAAccelerator().setup_device(ampere_gpu)
    assert page_quotes("beyond/04-tf32.md", str(raised.value))


def test_lightning_check_reads_the_legacy_getter_only_on_ampere_or_later(
    ampere_gpu, restore_precision, monkeypatch
):
    # Ampere보다 오래된 GPU(V100, 7.0)에서는 Lightning이 설정을 읽지 않아 새 API도 지나갑니다.
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 0))
    bt.enable_tf32_new_api()
    _check_cuda_matmul_precision(ampere_gpu)


def test_reading_the_legacy_settings_after_the_new_api_raises(restore_precision):
    bt.enable_tf32_new_api()
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs") as getter:
        bt.read_legacy_precision()
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs") as flag:
        _ = torch.backends.cuda.matmul.allow_tf32
    assert page_quotes("beyond/04-tf32.md", str(getter.value))
    assert page_quotes("beyond/04-tf32.md", str(flag.value))


def test_the_cpu_bf16_setting_also_breaks_the_legacy_getter_and_medium_does_not(
    restore_precision,
):
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs"):
        bt.read_legacy_precision()
    torch.backends.mkldnn.matmul.fp32_precision = "none"
    # 옛 API의 "medium"은 CPU(oneDNN)를 bf16으로, CUDA를 TF32로 두고 옛 API로도 읽힙니다.
    torch.set_float32_matmul_precision("medium")
    assert torch.backends.mkldnn.matmul.fp32_precision == "bf16"
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    assert bt.read_legacy_precision() == "medium"


@pytest.mark.parametrize("n", [16, 100, 256])
def test_cpu_bf16_matches_ieee_within_bf16_precision(n, restore_precision):
    (a, b), _ = bt.make_inputs("cpu", n, 1, 1, 1, seed=n)
    expected = bt.matmul_cpu_ieee(a, b)
    actual = bt.matmul_cpu_bf16(a, b)
    torch.testing.assert_close(expected, a @ b, rtol=0, atol=0)
    if torch.ops.mkldnn._is_mkldnn_bf16_supported():
        assert bt.relative_error(actual, expected) < BF16_EPS
        # oneDNN은 작은 행렬 곱을 bf16으로 보내지 않을 수 있습니다(Xeon AMX는 n=16,
        # Zen 4는 n=100에서 IEEE와 같았음). 가장 큰 크기에서는 설정이 계산을 바꿔야 합니다.
        assert n < 256 or bt.relative_error(actual, expected) > 0
    else:
        # bf16 명령이 없는 CPU에서는 설정이 아무것도 바꾸지 않습니다.
        assert torch.equal(actual, expected)
    assert bt.fp32_settings() == DEFAULTS


def test_main_runs_on_cpu(capsys, restore_precision):
    bt.main("cpu")
    out = capsys.readouterr().out
    assert "기본 설정 행렬 곱(cuBLAS): 'none'" in out
    assert "기본 설정 합성곱(cuDNN): 'tf32'" in out
    assert "torch.get_float32_matmul_precision() = 'highest'" in out
    assert "행렬 곱: matmul_ieee" in out and "상대 오차 0.0e+00" in out
    assert "CPU 행렬 곱: matmul_cpu_ieee" in out
