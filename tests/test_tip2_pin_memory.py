"""snippets/tip2_pin_memory.py의 테스트: 고정 메모리를 거친 복사가 같은 값을 내는지 봅니다."""

import warnings

import pytest
import torch
from torch.utils.data import TensorDataset

from snippets import tip2_pin_memory as tip2
from tests.site_build import page_quotes

NO_ACCELERATOR_WARNING = (
    "'pin_memory' argument is set as true but no accelerator is found, "
    "then device pinned memory won't be used."
)
SHAPES = [(1,), (3, 5), (2, 3, 4, 4)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.uint8]
needs_no_accelerator = pytest.mark.skipif(
    torch.accelerator.is_available(), reason="가속기가 없는 컴퓨터에서만 확인합니다"
)
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA GPU가 필요합니다")


def random_tensor(shape, dtype, generator):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator).to(dtype)
    return torch.randint(0, 200, shape, generator=generator).to(dtype)


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_pinned_copy_equals_pageable_copy(shape, dtype):
    # CPU에서는 두 방식 모두 `.to("cpu")`라 아무것도 옮기지 않으므로 CUDA에서만 의미가 있습니다.
    generator = torch.Generator().manual_seed(2)
    batch = (random_tensor(shape, dtype, generator), random_tensor(shape[:1], dtype, generator))
    expected = tuple(t.clone() for t in batch)

    pinned = tip2.pin_batch(batch)
    assert all(t.is_pinned() for t in pinned)
    slow = tip2.copy_pageable(batch, "cuda")
    fast = tip2.copy_pinned(pinned, "cuda")
    torch.cuda.synchronize()  # 비동기 복사를 CPU에서 읽기 전에 기다립니다.

    for s, f, e in zip(slow, fast, expected, strict=True):
        assert s.device.type == f.device.type == "cuda"
        assert s.dtype == f.dtype == e.dtype and s.shape == f.shape == e.shape
        torch.testing.assert_close(f.cpu(), e, rtol=0, atol=0)
        torch.testing.assert_close(s.cpu(), e, rtol=0, atol=0)


@pytest.fixture
def recorded_calls(monkeypatch):
    """가속기가 있는 컴퓨터처럼 보이게 하고, 텐서의 pin_memory()와 to() 호출을 기록합니다.

    CPU만 있는 컴퓨터에서는 두 방식이 같은 일을 하므로 값으로는 차이를 볼 수 없습니다. 대신 빠른
    방식이 고정을 요청하고 비동기 복사를 요청하는지를 호출로 확인합니다.
    """
    calls = []
    plain_to = torch.Tensor.to

    def fake_pin_memory(self, *args, **kwargs):
        calls.append(("pin_memory", args, kwargs))
        return self.clone()

    def recording_to(self, *args, **kwargs):
        calls.append(("to", args, kwargs))
        return plain_to(self, "cpu")

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("cuda"))
    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin_memory)
    monkeypatch.setattr(torch.Tensor, "to", recording_to)
    return calls


def test_fast_copy_pins_once_and_copies_without_blocking(recorded_calls):
    batch = tip2.make_batch(batch_size=2, image_size=4)
    pinned = tip2.pin_batch(batch)
    assert [name for name, _, _ in recorded_calls] == ["pin_memory", "pin_memory"]
    recorded_calls.clear()
    tip2.copy_pinned(pinned, "cuda")
    assert recorded_calls == [("to", ("cuda",), {"non_blocking": True})] * 2


def test_slow_copy_neither_pins_nor_skips_waiting(recorded_calls):
    tip2.copy_pageable(tip2.make_batch(batch_size=2, image_size=4), "cuda")
    assert recorded_calls == [("to", ("cuda",), {})] * 2


def test_pin_if_available_does_not_pin_on_mps(recorded_calls, monkeypatch):
    # Apple GPU(MPS)에서는 DataLoader도 고정하지 않습니다. 같은 텐서를 그대로 돌려줍니다.
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("mps"))
    tensor = torch.ones(3)
    assert tip2.pin_if_available(tensor) is tensor
    assert recorded_calls == []


def test_make_batch_builds_images_and_labels():
    images, labels = tip2.make_batch(batch_size=5, image_size=7)
    assert images.shape == (5, 3, 7, 7) and images.dtype == torch.float32
    assert labels.shape == (5,) and labels.dtype == torch.int64
    assert 0 <= images.min() and images.max() < 1 and images.std() > 0
    assert 0 <= labels.min() and labels.max() < 1000


@needs_no_accelerator
def test_plain_pin_memory_fails_without_accelerator():
    # 페이지의 설명: 가속기가 없으면 pin_memory() 자체가 RuntimeError를 냅니다.
    with pytest.raises(
        RuntimeError, match="Cannot access accelerator device when none is available"
    ) as excinfo:
        torch.ones(3).pin_memory()
    assert page_quotes("tips/02-pin-memory.md", str(excinfo.value))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pin_if_available_keeps_values(dtype):
    tensor = random_tensor((4, 6), dtype, torch.Generator().manual_seed(3))
    pinned = tip2.pin_if_available(tensor)
    assert pinned.dtype == dtype
    torch.testing.assert_close(pinned, tensor, rtol=0, atol=0)
    if torch.accelerator.is_available():
        assert pinned.is_pinned()
    else:
        # CPU만 있으면 고정하지 않고 같은 텐서를 그대로 돌려줍니다(오류 없이).
        assert pinned is tensor and not pinned.is_pinned()


def collect(loader):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = list(loader)
    return batches, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@needs_no_accelerator
@pytest.mark.parametrize("num_workers", [0, 1])
def test_dataloader_pin_memory_warns_and_does_not_pin_on_cpu(num_workers):
    dataset = TensorDataset(*tip2.make_batch(batch_size=10, image_size=4))
    pinned, pinned_warnings = collect(
        tip2.make_loader(dataset, batch_size=4, num_workers=num_workers, shuffle=False)
    )
    plain, plain_warnings = collect(
        tip2.make_loader(
            dataset, batch_size=4, num_workers=num_workers, pin_memory=False, shuffle=False
        )
    )
    assert pinned_warnings == [NO_ACCELERATOR_WARNING]
    assert plain_warnings == []
    assert page_quotes("tips/02-pin-memory.md", NO_ACCELERATOR_WARNING)
    assert len(pinned) == len(plain) == 3
    for (pinned_x, pinned_y), (plain_x, plain_y) in zip(pinned, plain, strict=True):
        assert not pinned_x.is_pinned() and not pinned_y.is_pinned()
        torch.testing.assert_close(pinned_x, plain_x, rtol=0, atol=0)
        torch.testing.assert_close(pinned_y, plain_y, rtol=0, atol=0)


@needs_no_accelerator
def test_article_loader_runs_with_the_same_warning():
    dataset = TensorDataset(torch.arange(6.0), torch.arange(6))
    batches, caught = collect(tip2.article_loader(dataset))
    assert caught == [NO_ACCELERATOR_WARNING]
    # 원문 코드는 batch_size를 주지 않으므로 배치 하나에 샘플 하나입니다.
    assert [x.tolist() for x, _ in batches] == [[float(i)] for i in range(6)]


def train_tiny_model(pin_memory, device="cpu", prefetch=False):
    torch.manual_seed(0)
    images, labels = tip2.make_batch(batch_size=24, image_size=4)
    labels = labels % 5
    loader = tip2.make_loader(
        TensorDataset(images, labels),
        batch_size=8,
        num_workers=0,
        pin_memory=pin_memory,
        shuffle=False,
    )
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    initial = [p.detach().cpu().clone() for p in model.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train = tip2.train_with_prefetch if prefetch else tip2.train_one_epoch
        loss = train(model, loader, optimizer, device)
    return loss.cpu(), [p.detach().cpu() for p in model.parameters()], initial


def test_training_with_pin_memory_equals_without():
    loss_pinned, params_pinned, initial = train_tiny_model(pin_memory=True)
    loss_plain, params_plain, _ = train_tiny_model(pin_memory=False)
    torch.testing.assert_close(loss_pinned, loss_plain, rtol=0, atol=0)
    for p, q in zip(params_pinned, params_plain, strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    # 학습이 실제로 일어났는지도 봅니다(초기값 그대로면 비교가 의미 없습니다).
    assert not any(torch.equal(p, q) for p, q in zip(params_pinned, initial, strict=True))


@needs_cuda
def test_prefetch_on_cuda_equals_plain_loop():
    loss_plain, params_plain, _ = train_tiny_model(pin_memory=True, device="cuda")
    loss_prefetch, params_prefetch, _ = train_tiny_model(
        pin_memory=True, device="cuda", prefetch=True
    )
    torch.testing.assert_close(loss_prefetch, loss_plain)
    for p, q in zip(params_prefetch, params_plain, strict=True):
        torch.testing.assert_close(p, q)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
@pytest.mark.parametrize(
    "gpu_only",
    [
        lambda: tip2.measure_copy_bandwidth(),
        lambda: tip2.train_with_prefetch(None, [], None),
    ],
    ids=["measure_copy_bandwidth", "train_with_prefetch"],
)
def test_gpu_only_code_stops_with_korean_message(gpu_only):
    with pytest.raises(SystemExit, match="이 예제는 CUDA GPU가 필요합니다"):
        gpu_only()


def test_main_runs_on_cpu(capsys):
    tip2.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "CUDA GPU가 있어야" in out
    if not torch.accelerator.is_available():
        assert NO_ACCELERATOR_WARNING in out
        assert "고정 메모리에 있는가: False" in out
