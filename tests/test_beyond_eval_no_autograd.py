"""snippets/beyond_eval_no_autograd.py의 테스트: autograd 없이 평가해도 결과가 같은지, 디버깅
도구를 켠 학습도 같은 결과를 내는지, 그리고 페이지가 말하는 함정이 실제로 일어나는지."""

import copy

import lightning as L
import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from snippets import beyond_eval_no_autograd as ev
from tests.site_build import page_quotes

PAGE = "beyond/10-eval-without-autograd.md"
# (배치 수, 배치 크기, 특징 수, 은닉 크기, 층 수)
SHAPES = [(1, 1, 4, 8, 1), (3, 5, 16, 32, 2), (4, 32, 64, 128, 3)]


def setup(shape, dtype):
    batches, batch_size, features, hidden, layers = shape
    model = ev.make_model(features, hidden, layers, dtype=dtype)
    return model, ev.make_inputs(batches, batch_size, features, dtype=dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("fast", [ev.evaluate, ev.evaluate_no_grad], ids=lambda f: f.__name__)
def test_fast_evaluation_equals_slow(shape, dtype, fast):
    model, batches = setup(shape, dtype)
    slow_loss, slow_acc = ev.evaluate_with_autograd(model, batches)
    fast_loss, fast_acc = fast(model, batches)
    # 같은 연산을 같은 순서로 하므로 비트 단위까지 같습니다. autograd는 값을 바꾸지 않습니다.
    torch.testing.assert_close(fast_loss, slow_loss.detach(), rtol=0, atol=0)
    torch.testing.assert_close(fast_acc, slow_acc, rtol=0, atol=0)
    assert slow_loss.requires_grad and not fast_loss.requires_grad


def test_inference_mode_result_is_an_inference_tensor():
    model, batches = setup(SHAPES[1], torch.float32)
    loss, _ = ev.evaluate(model, batches)
    assert loss.is_inference()
    assert not ev.evaluate_no_grad(model, batches)[0].is_inference()


def test_slow_evaluation_keeps_every_batch_graph_alive():
    # 텐서 손실을 더해 가면 첫 배치의 그래프까지 끝까지 살아 있습니다(메모리가 배치 수에 비례).
    model, batches = setup(SHAPES[2], torch.float32)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        loss, _ = ev.evaluate_with_autograd(model, batches)
    assert loss.grad_fn is not None and len(saved) > len(batches)
    saved.clear()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        ev.evaluate(model, batches)
    assert saved == []


def test_inference_mode_does_not_call_eval():
    model, batches = setup(SHAPES[2], torch.float64)
    reference, _ = ev.evaluate(model, batches)  # eval()을 부릅니다.
    model.train()
    torch.manual_seed(0)
    first = ev.evaluate_forgot_eval(model, batches)
    torch.manual_seed(1)
    second = ev.evaluate_forgot_eval(model, batches)
    assert model.training  # inference_mode는 모드를 바꾸지 않습니다.
    assert not torch.equal(first, reference) and not torch.equal(first, second)


def test_inference_tensor_cannot_join_training():
    # 페이지가 인용하는 오류: inference_mode에서 만든 텐서를 학습 계산에 쓰면 멈춥니다.
    model, batches = setup(SHAPES[1], torch.float32)
    with torch.inference_mode():
        features = model[0](batches[0][0])
    head = torch.nn.Linear(features.shape[1], 2)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward") as e:
        head(features).sum().backward()
    assert page_quotes(PAGE, str(e.value))
    # no_grad로 만든 텐서는 괜찮습니다.
    with torch.no_grad():
        features = model[0](batches[0][0])
    head(features).sum().backward()
    assert head.weight.grad is not None


@pytest.mark.parametrize(
    "debug",
    [ev.train_steps_with_anomaly_detection, ev.train_steps_with_profiler],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_debugging_tools_do_not_change_training(debug, dtype):
    model, batches = setup(SHAPES[1], dtype)
    model.eval()  # 드롭아웃의 난수를 빼고 비교합니다(train_steps가 train()으로 돌려놓습니다).
    twin = copy.deepcopy(model)
    for m in (model, twin):
        for layer in m:
            if isinstance(layer, torch.nn.Dropout):
                layer.p = 0.0
    loss = ev.train_steps(model, torch.optim.SGD(model.parameters(), lr=0.1), batches)
    debug_loss = debug(twin, torch.optim.SGD(twin.parameters(), lr=0.1), batches)
    torch.testing.assert_close(debug_loss, loss, rtol=0, atol=0)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(q, p, rtol=0, atol=0)
    assert not torch.is_anomaly_enabled()  # 컨텍스트를 나오면 다시 꺼집니다.


# 이상 탐지는 오류와 함께 문제의 순전파 위치를 경고로 알려 줍니다. 그 경고는 여기서 끕니다.
@pytest.mark.filterwarnings("ignore:Error detected in")
def test_anomaly_detection_finds_the_nan():
    model, batches = setup(SHAPES[1], torch.float32)
    x, y = batches[0]
    x = x.clone()
    x[0, 0] = float("nan")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(RuntimeError, match="returned nan values"):
        ev.train_steps_with_anomaly_detection(model, optimizer, [(x.requires_grad_(), y)])


class RecordsEvaluationMode(L.LightningModule):
    """validation_step에서 autograd 상태와 학습 모드를 기록합니다."""

    def __init__(self):
        super().__init__()
        self.model = ev.make_model(features=4, hidden=8, layers=1)
        self.seen = []

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.seen.append(
            (torch.is_inference_mode_enabled(), torch.is_grad_enabled(), self.model.training)
        )
        return F.cross_entropy(self.model(x), y)


@pytest.mark.parametrize(
    ("inference_mode", "expected"), [(True, (True, False)), (False, (False, False))]
)
def test_lightning_validates_without_autograd_and_in_eval_mode(inference_mode, expected):
    # Trainer(inference_mode=True)가 기본값입니다. False면 no_grad로 평가합니다.
    # 둘 다 eval()을 부릅니다.
    module = RecordsEvaluationMode()
    trainer = L.Trainer(
        accelerator="cpu",
        inference_mode=inference_mode,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    batches = DataLoader(ev.make_inputs(2, 3, features=4), batch_size=None)
    trainer.validate(module, batches, verbose=False)
    assert module.seen == [(*expected, False)] * 2


def test_main_runs_on_cpu(capsys):
    ev.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "inference_mode:" in out and "set_detect_anomaly(True):" in out
    assert "eval()을 잊은 평가의 손실" in out
