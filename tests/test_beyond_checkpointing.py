"""snippets/beyond_checkpointing.py의 테스트: 체크포인팅해도 손실과 변화도가 같고, 저장하는 활성값이
정확히 계산한 만큼 줄어드는지 봅니다."""

import copy
import warnings
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from lightning.pytorch.strategies import FSDPStrategy
from torch.utils._python_dispatch import TorchDispatchMode

from snippets import beyond_checkpointing as ck
from tests.site_build import page_quotes

# (d_model, 블록 수, 배치, 길이)
SHAPES = [(8, 1, 1, 1), (16, 3, 2, 5), (32, 4, 3, 7)]
FORWARDS = {
    "every-block": ck.forward_checkpointed,
    "every-other": lambda blocks, x: ck.forward_checkpointed(blocks, x, every=2),
    "selective": ck.forward_selective,
}


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(FORWARDS))
def test_checkpointed_step_gives_the_same_loss_and_gradients(name, shape, dtype):
    d_model, num_blocks, batch, seq_len = shape
    model, x, y = ck.make_inputs("cpu", d_model, num_blocks, batch, seq_len, dtype, seed=d_model)
    plain = copy.deepcopy(model)
    loss_plain = ck.train_step(plain, ck.forward_plain, x, y)
    loss_ck = ck.train_step(model, FORWARDS[name], x, y)
    # 다시 계산해도 같은 연산을 같은 순서로 하므로 CPU에서는 비트까지 같습니다.
    torch.testing.assert_close(loss_ck, loss_plain, rtol=0, atol=0)
    for g_ck, g_plain in zip(grads(model), grads(plain), strict=True):
        torch.testing.assert_close(g_ck, g_plain, rtol=0, atol=0)


def saved(model, forward, x, y):
    return ck.saved_activation_bytes(model, lambda: ck.loss_of(model, forward, x, y))


@pytest.mark.parametrize("shape", SHAPES)
def test_saved_activation_bytes_are_exactly_the_block_inputs(shape):
    d_model, num_blocks, batch, seq_len = shape
    model, x, y = ck.make_inputs("cpu", d_model, num_blocks, batch, seq_len)
    tokens, fp32 = batch * seq_len, 4
    plain = saved(model, ck.forward_plain, x, y)
    checkpointed = saved(model, ck.forward_checkpointed, x, y)
    # 체크포인팅: 블록마다 입력 하나(d)만 남고, 출력 계층의 입력과 손실 계산의 텐서가 더해집니다.
    # 없음: 블록마다 입력(d), LayerNorm 출력(d)과 통계(평균, 표준편차의 역수),
    # 첫 Linear 출력(4d), GELU 출력(4d)이 남습니다.
    outside = plain - num_blocks * tokens * fp32 * (
        d_model + d_model + 4 * d_model + 4 * d_model + 2
    )
    assert checkpointed == num_blocks * tokens * d_model * fp32 + outside
    assert checkpointed < plain
    # 저장하는 것이 없도록 한 번 더 불러도 값이 같습니다(가중치 변화도도 남기지 않습니다).
    assert saved(model, ck.forward_plain, x, y) == plain
    assert all(p.grad is None for p in model.parameters())


class CountOps(TorchDispatchMode):
    """디스패치되는 aten 연산을 셉니다."""

    def __init__(self):
        super().__init__()
        self.ops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket).removeprefix("aten.")] += 1
        return func(*args, **(kwargs or {}))


def ops_in_backward(forward):
    model, x, y = ck.make_inputs("cpu", 16, 3, 2, 5)
    loss = F.mse_loss(model.head(forward(model.blocks, x)), y)
    with CountOps() as counter:
        loss.backward()
    return counter.ops


def test_selective_checkpoint_recomputes_cheap_ops_but_not_the_matmuls():
    # 역전파 안에서 순전파의 연산(addmm: 블록의 Linear, native_layer_norm, gelu)을
    # 다시 하는지 셉니다.
    plain, every, selective = (
        ops_in_backward(f)
        for f in (ck.forward_plain, ck.forward_checkpointed, ck.forward_selective)
    )
    assert plain["addmm"] == plain["gelu"] == plain["native_layer_norm"] == 0
    assert every["addmm"] > 0 and every["gelu"] > 0 and every["native_layer_norm"] > 0
    assert selective["addmm"] == 0  # 행렬 곱의 출력은 저장해 두었습니다.
    assert selective["gelu"] == every["gelu"]
    assert selective["native_layer_norm"] == every["native_layer_norm"]


def test_lightning_fsdp_policy_checkpoints_the_given_block_class():
    strategy = FSDPStrategy(activation_checkpointing_policy={ck.MLPBlock})
    policy = strategy._activation_checkpointing_kwargs["auto_wrap_policy"]
    assert policy._module_classes == {ck.MLPBlock}


def test_every_other_block_saves_between_none_and_all():
    model, x, y = ck.make_inputs("cpu", 16, 4, 2, 8)
    plain = saved(model, ck.forward_plain, x, y)
    every = saved(model, ck.forward_checkpointed, x, y)
    other = saved(model, FORWARDS["every-other"], x, y)
    assert every < other < plain


def test_reentrant_checkpoint_silently_drops_the_first_blocks_gradients():
    # open_clip#573, pytorch-memonger#4: use_reentrant=True에서 입력이 변화도를 요구하지 않으면
    # 체크포인팅한 블록들의 가중치 변화도가 None입니다. 출력 계층만 학습됩니다.
    model, x, y = ck.make_inputs("cpu", 8, 2, 2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ck.train_step(model, ck.forward_checkpointed_reentrant, x, y)
    messages = [str(w.message) for w in caught]
    warning = "None of the inputs have requires_grad=True. Gradients will be None"
    assert warning in messages
    assert page_quotes("beyond/08-activation-checkpointing.md", warning)
    assert all(p.grad is None for p in model.blocks.parameters())
    assert model.head.weight.grad is not None
    # use_reentrant=False는 같은 경우에도 모든 변화도를 계산합니다.
    ck.train_step(model, ck.forward_checkpointed, x, y)
    assert all(p.grad is not None for p in model.parameters())


def test_checkpoint_without_use_reentrant_warns():
    model, x, _ = ck.make_inputs("cpu", 8, 1, 1, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.utils.checkpoint.checkpoint(model.blocks[0], x)
    # torch 2.13에서도 아직 예외가 아니라 경고이고, 옛 방식(True)으로 동작합니다. 옛 방식만 내는
    # "None of the inputs" 경고가 함께 나는 것으로 그 사실을 확인합니다.
    messages = [str(w.message) for w in caught]
    assert any("use_reentrant parameter should be passed explicitly" in m for m in messages)
    assert any("None of the inputs have requires_grad=True" in m for m in messages)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_peak_memory_needs_cuda_and_runs_nothing_without_it():
    calls = []
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        ck.peak_memory_of(lambda: calls.append(1))
    assert calls == []


def test_main_runs_on_cpu(capsys):
    ck.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "체크포인팅 없음" in out and "블록마다 체크포인팅" in out
    assert "저장한 활성값" in out and "최고 메모리" not in out


def test_dropout_inside_a_checkpointed_block_replays_the_same_mask():
    # checkpoint는 난수 상태를 저장했다가 다시 계산할 때 되돌립니다(페이지의 설명).
    torch.manual_seed(0)
    blocks = torch.nn.ModuleList(
        torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)) for _ in range(2)
    )
    x = torch.randn(4, 8)
    results = []
    for forward in (ck.forward_plain, ck.forward_checkpointed):
        torch.manual_seed(1)
        blocks.zero_grad(set_to_none=True)
        forward(blocks, x).square().sum().backward()
        results.append([p.grad.clone() for p in blocks.parameters()])
    for g_ck, g_plain in zip(*results, strict=True):
        torch.testing.assert_close(g_ck, g_plain, rtol=0, atol=0)
