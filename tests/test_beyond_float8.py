"""snippets/beyond_float8.py의 테스트.

float8 학습의 속도는 Hopper/Ada GPU에서만 의미가 있지만, torchao의 Float8Linear는 CPU에서도
(느리게) 같은 계산을 흉내 냅니다. torchao가 설치되어 있으면 CPU에서 float8 학습 스텝이 bf16과
float8의 오차 범위 안에서 같은지 확인하고, 없으면 그 테스트만 이유를 밝히고 건너뜁니다.
"""

import importlib.util

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from snippets import beyond_float8 as f8

HAS_TORCHAO = importlib.util.find_spec("torchao") is not None
needs_torchao = pytest.mark.skipif(not HAS_TORCHAO, reason="torchao가 설치되어 있지 않습니다")


def relative_error(actual, expected):
    return ((actual.float() - expected.float()).norm() / expected.float().norm()).item()


@needs_torchao
@pytest.mark.parametrize(("dim", "hidden", "tokens"), [(16, 32, 16), (32, 64, 48), (64, 128, 32)])
def test_float8_step_matches_bf16_within_float8_error(dim, hidden, tokens):
    x = f8.make_inputs(tokens, dim, dtype=torch.float32)
    reference = f8.make_model(dim, hidden, dtype=torch.float32)
    converted = f8.float8_model(f8.make_model(dim, hidden, dtype=torch.float32), compile=False)
    assert sum(type(m).__name__ == "Float8Linear" for m in converted.modules()) == 4
    y_ref, y = reference(x), converted(x)
    # e4m3의 가수는 3비트(상대 오차 약 6%)입니다. 출력과 변화도는 그보다 훨씬 가깝게 맞습니다.
    assert relative_error(y, y_ref) < 0.1
    y_ref.float().pow(2).mean().backward()
    y.float().pow(2).mean().backward()
    for p, q in zip(converted.parameters(), reference.parameters(), strict=True):
        assert relative_error(p.grad, q.grad) < 0.15


@needs_torchao
def test_layers_not_divisible_by_16_stay_linear():
    model = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.Linear(24, 32))
    f8.float8_model(model, compile=False)
    assert [type(m).__name__ for m in model] == ["Linear", "Linear"]
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Linear(32, 40))
    f8.float8_model(model, compile=False)
    assert [type(m).__name__ for m in model] == ["Float8Linear", "Linear"]


@pytest.mark.parametrize(("dim", "hidden", "layers"), [(16, 32, 1), (64, 256, 2)])
def test_train_step_in_bf16(dim, hidden, layers):
    model = f8.make_model(dim, hidden, layers)
    x = f8.make_inputs(8, dim)
    loss = f8.train_step(model, torch.optim.SGD(model.parameters(), lr=1e-3), x)
    assert loss.dtype == torch.float32 and torch.isfinite(loss)
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())


@pytest.mark.parametrize(
    ("dim", "hidden", "layers", "tokens"), [(16, 32, 1, 8), (64, 256, 2, 8), (48, 80, 3, 5)]
)
def test_linear_flops_matches_torchs_flop_counter(dim, hidden, layers, tokens):
    # 공식을 다시 적지 않고, PyTorch의 FlopCounterMode가 실제로 실행된 행렬 곱을 센 값과 비교합니다.
    model = f8.make_model(dim, hidden, layers, dtype=torch.float32)
    x = f8.make_inputs(tokens, dim, dtype=torch.float32)
    with FlopCounterMode(display=False) as counter:
        model(x).float().pow(2).mean().backward()
    assert f8.linear_flops(model, tokens) == counter.get_total_flops()


def test_cpu_is_not_supported_with_a_korean_reason():
    reason = f8.float8_support(torch.device("cpu"))
    assert "CUDA GPU가 필요합니다" in reason and "계산 능력 8.9 이상" in reason
    assert "Ada, Hopper, Blackwell" in reason
    with pytest.raises(SystemExit, match="이 예제는 CUDA GPU가 필요합니다"):
        f8.require_float8(torch.device("cpu"))


@pytest.mark.parametrize(
    ("name", "capability"), [("NVIDIA A100", (8, 0)), ("NVIDIA GeForce RTX 3090", (8, 6))]
)
def test_ampere_and_older_gpus_are_not_supported(monkeypatch, name, capability):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
    reason = f8.float8_support(torch.device("cuda"))
    assert f"{name}(계산 능력 {capability[0]}.{capability[1]})" in reason
    assert "A100을 포함한 Ampere 이하" in reason and "8.9 이상" in reason


@pytest.mark.parametrize("capability", [(8, 9), (9, 0), (10, 0)])  # Ada, Hopper, Blackwell
def test_ada_hopper_and_blackwell_pass_the_hardware_check(monkeypatch, capability):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setitem(__import__("sys").modules, "torchao", None)
    # 하드웨어 검사를 지나 다음 조건(torchao)에서 멈춥니다.
    assert f8.float8_support(torch.device("cuda")).startswith("torchao가 설치되어 있지 않습니다")


def test_missing_torchao_is_explained(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setitem(__import__("sys").modules, "torchao", None)  # import가 실패하게 합니다.
    reason = f8.float8_support(torch.device("cuda"))
    assert "torchao가 설치되어 있지 않습니다" in reason and "pip install torchao" in reason


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서 확인합니다")
def test_main_on_cpu_says_what_is_needed(capsys):
    f8.main("cpu")
    out = capsys.readouterr().out
    assert "여기서는 float8 학습을 재지 않습니다" in out and "CUDA GPU가 필요합니다" in out
