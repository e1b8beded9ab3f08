"""snippets/beyond_cudnn_benchmark.py의 테스트: benchmark 설정이 결과를 바꾸지 않고, 함수가 끝나면
전역 설정을 되돌려 놓는지 봅니다."""

import copy

import lightning as L
import pytest
import torch

from snippets import beyond_cudnn_benchmark as cb

# (채널, 층 수, 배치, 크기)
SHAPES = [(4, 1, 1, 3), (8, 2, 2, 9), (16, 3, 3, 16)]


def device():
    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def restore_benchmark_flag():
    saved = torch.backends.cudnn.benchmark
    yield
    torch.backends.cudnn.benchmark = saved


@pytest.fixture
def exact_fp32_convolutions():
    """GPU의 fp32 합성곱은 기본으로 TF32입니다. 알고리즘끼리 비교하려고 잠깐 끕니다."""
    saved = torch.backends.cudnn.conv.fp32_precision
    torch.backends.cudnn.conv.fp32_precision = "ieee"
    yield
    torch.backends.cudnn.conv.fp32_precision = saved


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("batches", ["fixed", "changing"])
def test_benchmark_mode_gives_the_same_outputs_and_gradients(
    shape, batches, restore_benchmark_flag, exact_fp32_convolutions
):
    channels, num_layers, batch, size = shape
    model = cb.make_inputs(device(), channels, num_layers, seed=channels)
    if batches == "fixed":
        xs = cb.fixed_batches(device(), 3, batch, size)
    else:
        xs = cb.changing_batches(device(), 3, batch, size, start=1)
    slow_model, fast_model = copy.deepcopy(model), copy.deepcopy(model)
    outs_slow = cb.steps_default(slow_model, xs)
    outs_fast = cb.steps_benchmark(fast_model, xs)
    # CPU에는 cuDNN이 없어 두 설정이 같은 계산을 하므로 비트까지 같습니다. GPU에서는 고른
    # 알고리즘(FFT, Winograd 등)에 따라 반올림이 달라지므로 그만큼 허용합니다.
    tol = 2e-3 if torch.cuda.is_available() else 0.0
    for out_fast, out_slow in zip(outs_fast, outs_slow, strict=True):
        torch.testing.assert_close(out_fast, out_slow, rtol=tol, atol=tol)
    for p_fast, p_slow in zip(fast_model.parameters(), slow_model.parameters(), strict=True):
        torch.testing.assert_close(p_fast.grad, p_slow.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("previous", [False, True])
@pytest.mark.parametrize("steps", [cb.steps_default, cb.steps_benchmark])
def test_steps_set_the_flag_only_inside_and_restore_it(steps, previous, restore_benchmark_flag):
    torch.backends.cudnn.benchmark = previous
    model = cb.make_inputs(device(), 4, 1)
    seen = []
    model.register_forward_pre_hook(lambda *_: seen.append(torch.backends.cudnn.benchmark))
    steps(model, cb.fixed_batches(device(), 2, 1, 4))
    assert seen == [steps is cb.steps_benchmark] * 2
    assert torch.backends.cudnn.benchmark is previous


def test_restores_the_flag_when_a_step_fails(restore_benchmark_flag):
    torch.backends.cudnn.benchmark = False
    model = cb.make_inputs(device(), 4, 1)
    with pytest.raises(RuntimeError):
        cb.steps_benchmark(model, [torch.randn(1, 5, 4, 4, device=device())])  # 채널 수가 틀림
    assert torch.backends.cudnn.benchmark is False


def test_changing_batches_are_all_new_shapes():
    first = cb.changing_batches("cpu", 4, batch=2, size=8, start=0)
    later = cb.changing_batches("cpu", 4, batch=2, size=8, start=4)
    wider = cb.changing_batches("cpu", 8, batch=2, size=8, start=0, widen=2)
    shapes = [tuple(x.shape) for x in first + later + wider]
    assert len(set(shapes)) == len(shapes) == 16
    assert {tuple(x.shape) for x in cb.fixed_batches("cpu", 3, batch=2, size=8)} == {(2, 3, 8, 8)}


def make_trainer(**kwargs):
    return L.Trainer(accelerator="cpu", logger=False, enable_checkpointing=False, **kwargs)


def test_lightning_trainer_benchmark_sets_the_flag(monkeypatch, restore_benchmark_flag):
    # Trainer(benchmark=True)는 torch.backends.cudnn.benchmark를 켭니다. 기본값 None은 지금 값을
    # 그대로 두고, deterministic=True를 주면 benchmark를 따로 주지 않은 한 끕니다.
    monkeypatch.setenv(
        "CUBLAS_WORKSPACE_CONFIG", ""
    )  # deterministic=True가 바꾸는 값을 되돌립니다.
    torch.backends.cudnn.benchmark = False
    make_trainer(benchmark=True)
    assert torch.backends.cudnn.benchmark is True
    make_trainer()
    assert torch.backends.cudnn.benchmark is True
    try:
        make_trainer(deterministic=True)
        assert torch.backends.cudnn.benchmark is False
    finally:
        torch.use_deterministic_algorithms(False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="cuDNN이 있는 CUDA GPU에서만 확인합니다")
def test_benchmark_limit_defaults_to_ten_algorithms_on_cuda():
    assert torch.backends.cudnn.benchmark_limit == 10


def test_main_runs_on_cpu(capsys):
    cb.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "고정된 모양, benchmark=True" in out and "바뀌는 모양, benchmark=True" in out
    assert "CPU에는 cuDNN이 없어서" in out
