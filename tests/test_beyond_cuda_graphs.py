"""snippets/beyond_cuda_graphs.py의 테스트.

CUDA 그래프는 GPU 전용입니다. CPU에서는 모델과 출력 모으기 함수가 맞는지, GPU 함수가 아무것도
실행하지 않고 한국어 메시지로 멈추는지 봅니다. GPU가 있으면 reduce-overhead와 직접 기록한 그래프가
eager와 같은 값을 내는지, 덮어쓴 출력을 읽으면 오류가 나는지도 봅니다.
"""

import pytest
import torch

from snippets import beyond_cuda_graphs as cg
from tests.site_build import page_quotes

CUDA = torch.cuda.is_available()
# (batch_size, d_model, num_layers)
SHAPES = [(4, 8, 1), (16, 32, 3), (3, 24, 2)]


@pytest.mark.parametrize("shape", SHAPES)
def test_safe_and_plain_prediction_agree_on_an_eager_model(shape):
    batch_size, d_model, num_layers = shape
    model, batches = cg.make_inputs("cpu", batch_size, d_model, num_layers, num_batches=3)
    plain = cg.predict_all(model, batches)
    safe = cg.predict_all_safe(model, batches)
    for p, s, x in zip(plain, safe, batches, strict=True):
        assert p.shape == (batch_size, d_model)
        torch.testing.assert_close(s, p, rtol=0, atol=0)
        assert s.data_ptr() != p.data_ptr()  # 안전한 쪽은 복사본을 모읍니다.
        assert not p.requires_grad  # 추론이라 변화도를 기록하지 않습니다.
        torch.testing.assert_close(p, model(x).detach())


def test_make_inputs_is_reproducible_and_in_eval_mode():
    m1, b1 = cg.make_inputs("cpu", 2, 8, 2, num_batches=2, seed=3)
    m2, b2 = cg.make_inputs("cpu", 2, 8, 2, num_batches=2, seed=3)
    assert not m1.training
    assert all(torch.equal(x, y) for x, y in zip(b1, b2, strict=True))
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters(), strict=True))


@pytest.mark.parametrize(
    "fn", [cg.compile_default, cg.compile_reduce_overhead], ids=lambda f: f.__name__
)
def test_compile_functions_refuse_a_cpu_model_in_korean(fn):
    model, _ = cg.make_inputs("cpu", 2, 8, 1)
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        fn(model)


def test_training_with_cuda_graphs_refuses_a_cpu_model_in_korean():
    model, batches = cg.make_inputs("cpu", 2, 8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        cg.train_with_cuda_graphs(model, optimizer, batches, batches)


def test_manual_capture_refuses_cpu_before_doing_anything():
    model, batches = cg.make_inputs("cpu", 2, 8, 1)
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    with pytest.raises(SystemExit, match="CUDA 그래프는 GPU 커널"):
        cg.capture_cuda_graph(model, batches[0])
    assert calls == []


@pytest.mark.skipif(CUDA, reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_main_on_cpu_says_not_applicable(capsys):
    cg.main("cpu")
    out = capsys.readouterr().out
    assert "해당하지 않습니다" in out


@pytest.mark.skipif(not CUDA, reason="CUDA GPU에서만 확인합니다")
@pytest.mark.parametrize("shape", SHAPES[:2])
def test_reduce_overhead_and_manual_graph_match_eager_on_gpu(shape):
    batch_size, d_model, num_layers = shape
    model, batches = cg.make_inputs("cuda", batch_size, d_model, num_layers, num_batches=3)
    expected = cg.predict_all(model, batches)
    torch._dynamo.reset()
    for fn in (cg.compile_reduce_overhead(model), cg.capture_cuda_graph(model, batches[0])):
        for got, want in zip(cg.predict_all_safe(fn, batches), expected, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not CUDA, reason="CUDA GPU에서만 확인합니다")
def test_reading_an_overwritten_output_raises_on_gpu():
    model, batches = cg.make_inputs("cuda", 4, 16, 2, num_batches=3)
    torch._dynamo.reset()
    compiled = cg.compile_reduce_overhead(model)
    cg.predict_all_safe(compiled, batches)  # 워밍업과 기록을 끝냅니다.
    kept = cg.predict_all(compiled, batches)
    with pytest.raises(RuntimeError, match="overwritten by a subsequent") as raised:
        kept[0].sum()
    assert page_quotes("beyond/02-cuda-graphs.md", str(raised.value).splitlines()[0])


@pytest.mark.skipif(not CUDA, reason="CUDA GPU에서만 확인합니다")
def test_manual_graph_returns_the_same_tensor_every_time_on_gpu():
    model, batches = cg.make_inputs("cuda", 4, 16, 2, num_batches=2)
    run = cg.capture_cuda_graph(model, batches[0])
    first = run(batches[0])
    first_values = first.clone()
    second = run(batches[1])
    assert first is second  # 같은 텐서입니다: 첫 결과가 소리 없이 바뀌었습니다.
    assert not torch.equal(first, first_values)


@pytest.mark.skipif(not CUDA, reason="CUDA GPU에서만 확인합니다")
def test_training_with_cuda_graphs_matches_eager_training_on_gpu():
    # 같은 가중치에서 출발해 eager와 reduce-overhead로 세 스텝을 학습하면 손실과 가중치가 같습니다.
    torch._dynamo.reset()
    results = []
    for graphs in (False, True):
        model, batches = cg.make_inputs("cuda", 8, 32, 2, num_batches=3)
        model.train()
        targets = [x.flip(-1) for x in batches]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        if graphs:
            losses = cg.train_with_cuda_graphs(model, optimizer, batches, targets)
        else:
            losses = []
            for x, y in zip(batches, targets, strict=True):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                losses.append(loss.detach())
        results.append((torch.stack(losses), [p.detach().clone() for p in model.parameters()]))
    (eager_losses, eager_weights), (graph_losses, graph_weights) = results
    torch.testing.assert_close(graph_losses, eager_losses, rtol=1e-4, atol=1e-5)
    for got, want in zip(graph_weights, eager_weights, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
