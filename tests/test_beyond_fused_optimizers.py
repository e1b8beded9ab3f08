"""snippets/beyond_fused_optimizers.py의 테스트: 세 구현이 같은 갱신을 하는지, CPU의 기본값,
구현마다 실제로 부르는 연산의 수."""

from collections import Counter

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from snippets import beyond_fused_optimizers as bf

# (텐서 수, 텐서 하나의 원소 수)
SHAPES = [(1, 7), (5, 33), (16, 256)]
# dtype별 허용 오차: 구현마다 연산 순서가 달라 마지막 자리 정도가 다를 수 있습니다. bf16에서
# fused는 속으로 fp32로 계산하고 한 번만 반올림하지만, for-loop는 연산마다 bf16으로 반올림해서
# 몇 ulp 다릅니다.
TOLERANCE = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-6},
    torch.float64: {"rtol": 1e-12, "atol": 1e-14},
    torch.bfloat16: {"rtol": 4 * 2**-7, "atol": 1e-2},
}


def run(name, shape, dtype, steps=3, seed=0):
    num_tensors, numel = shape
    params = bf.make_inputs("cpu", num_tensors, numel, dtype=dtype, seed=seed)
    optimizer = bf.OPTIMIZERS[name](params, lr=1e-2)
    bf.run_steps(optimizer, steps)
    return params, optimizer


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=str)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["foreach", "fused"])
def test_implementation_matches_the_for_loop(name, shape, dtype):
    expected, expected_opt = run("for-loop", shape, dtype)
    actual, actual_opt = run(name, shape, dtype)
    start = bf.make_inputs("cpu", *shape, dtype=dtype)
    for p, q, p0 in zip(actual, expected, start, strict=True):
        assert not torch.equal(q, p0)  # 정말 갱신했습니다.
        torch.testing.assert_close(p, q, **TOLERANCE[dtype])
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(
                actual_opt.state[p][key], expected_opt.state[q][key], **TOLERANCE[dtype]
            )


def test_cpu_default_is_the_for_loop():
    params = bf.make_inputs("cpu", 2, 8)
    assert bf.default_implementation(params) == "for-loop"


def test_default_adamw_on_cpu_runs_the_single_tensor_path(monkeypatch):
    # 기본 AdamW가 정말 for-loop 함수(_single_tensor_adam)를 부르는지 가로채 확인합니다.
    import torch.optim.adam as adam

    called = []
    for name in ("_single_tensor_adam", "_multi_tensor_adam", "_fused_adam"):
        original = getattr(adam, name)

        def spy(*args, _name=name, _original=original, **kwargs):
            called.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(adam, name, spy)
    params = bf.make_inputs("cpu", 3, 8)
    torch.optim.AdamW(params).step()
    bf.make_adamw_fused(params).step()
    bf.make_adamw_foreach(params).step()
    assert called == ["_single_tensor_adam", "_fused_adam", "_multi_tensor_adam"]


def test_fused_works_on_cpu_in_this_torch():
    params = bf.make_inputs("cpu", 2, 8)
    optimizer = bf.make_adamw_fused(params)
    assert optimizer.defaults["fused"] is True
    optimizer.step()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_bytes_per_step_counts_what_the_update_reads_and_writes(dtype):
    # 공식을 다시 적지 않고, 스텝 뒤 옵티마이저가 실제로 들고 있는 상태에서 셉니다. 갱신은 가중치,
    # 변화도, 가중치와 모양이 같은 상태 텐서(모멘트)를 읽고, 가중치와 그 상태 텐서를 씁니다.
    params = bf.make_inputs("cpu", 3, 10, dtype=dtype)
    optimizer = bf.make_adamw_fused(params)
    optimizer.step()
    read = written = 0
    for p in params:
        moments = [t for t in optimizer.state[p].values() if t.shape == p.shape]
        read += p.nbytes + p.grad.nbytes + sum(t.nbytes for t in moments)
        written += p.nbytes + sum(t.nbytes for t in moments)
    assert bf.adamw_bytes_per_step(params) == read + written


class CountOps(TorchDispatchMode):
    """디스패치되는 aten 연산의 이름을 셉니다(커널을 부르는 횟수에 가깝습니다)."""

    def __init__(self):
        super().__init__()
        self.ops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket).removeprefix("aten.")] += 1
        return func(*args, **(kwargs or {}))


def ops_of_one_step(optimizer):
    optimizer.step()  # 첫 스텝은 상태를 만드는 일이라 세지 않습니다.
    with CountOps() as counter:
        optimizer.step()
    return counter.ops


# AdamW의 계산을 텐서 하나씩 하는 연산들(for-loop 구현이 부릅니다).
PER_TENSOR_MATH = {"add_", "mul_", "lerp_", "addcmul_", "addcdiv_", "sqrt", "div"}


def test_for_loop_calls_grow_with_tensors_foreach_per_op_and_fused_per_dtype_group():
    few, many = 2, 8
    loop = [
        ops_of_one_step(bf.make_adamw_for_loop(bf.make_inputs("cpu", n, 16))) for n in (few, many)
    ]
    loop_math = [sum(ops[name] for name in PER_TENSOR_MATH) for ops in loop]
    assert loop_math[0] > 0 and loop_math[1] == loop_math[0] * many // few
    # foreach: 연산의 종류마다 한 번. 텐서 수가 늘어도 _foreach_ 연산의 수는 같습니다.
    each = [
        ops_of_one_step(bf.make_adamw_foreach(bf.make_inputs("cpu", n, 16))) for n in (few, many)
    ]
    foreach_calls = [
        sum(c for name, c in ops.items() if name.startswith("_foreach_")) for ops in each
    ]
    assert foreach_calls[0] == foreach_calls[1] > 0
    assert not any(each[1][name] for name in PER_TENSOR_MATH)
    # fused: dtype·장치 묶음마다 한 번. 커널 하나가 아니라 "몇 개"인 이유입니다.
    fused = ops_of_one_step(bf.make_adamw_fused(bf.make_inputs("cpu", many, 16)))
    assert fused["_fused_adamw_"] == 1
    mixed = bf.make_inputs("cpu", 3, 16) + bf.make_inputs("cpu", 2, 16, dtype=torch.float64)
    assert ops_of_one_step(bf.make_adamw_fused(mixed))["_fused_adamw_"] == 2


def test_make_inputs_is_reproducible():
    a = bf.make_inputs("cpu", 2, 5, seed=4)
    b = bf.make_inputs("cpu", 2, 5, seed=4)
    for p, q in zip(a, b, strict=True):
        assert torch.equal(p, q) and torch.equal(p.grad, q.grad)


def test_main_runs_on_cpu(capsys):
    bf.main("cpu")
    out = capsys.readouterr().out
    assert "이 장치에서 쓰는 구현: for-loop" in out
    for name in bf.OPTIMIZERS:
        assert f"{name}: 스텝" in out
    assert "기본 구현 for-loop 대비 1.00배" in out


def test_fused_accepts_a_gradient_with_different_strides():
    # pytorch#106951: 가중치와 변화도의 stride가 다르면 예전 fused AdamW는 "must have same dtype,
    # device, and layout"으로 멈췄습니다. torch 2.13의 CPU에서는 for-loop와 같은 갱신을 합니다.
    def run(make):
        w = torch.nn.Parameter(torch.ones((2, 1, 100)))
        x = torch.linspace(0, 1, 2000).reshape(10, 2, 100)
        torch.bmm(x.transpose(0, 1), w.transpose(1, 2)).sum().backward()
        assert w.stride() != w.grad.stride()
        make([w]).step()
        return w.detach()

    torch.testing.assert_close(run(bf.make_adamw_fused), run(bf.make_adamw_for_loop))
