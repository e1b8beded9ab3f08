"""고친 것 재기(torchdoctor/fixes.py): 미리 읽어 둔 배치로 스텝을 재는 입력 병목 판정과, 로더 측정의
작은 순수 함수들. 입력 병목 판정은 느린 로더(샘플마다 진짜 계산)에서 참, 메모리에 있는 빠른 로더에서
거짓이어야 합니다(거짓 양성은 결함입니다)."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset

from torchdoctor import fixes


class ComputeDataset(Dataset):
    """샘플마다 작은 행렬 곱을 여러 번 합니다(시계를 바쁘게 기다리지 않는 진짜 계산)."""

    def __len__(self):
        return 64

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        a = torch.randn(48, 48, generator=generator)
        for _ in range(60):
            a = torch.tanh(a @ a.T / 48)
        return a.flatten()[:16], a.sum().reshape(1)


def training_step(model, optimizer):
    def step(batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def small_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def test_a_loader_that_computes_every_sample_reads_input_bound():
    model, optimizer = small_model()
    loader = DataLoader(ComputeDataset(), batch_size=8)
    result = fixes.measure_input_bound(
        training_step(model, optimizer), loader, model=model, optimizer=optimizer, budget_s=3.0
    )
    assert result["input_bound"] is True, result
    assert result["low"] > 1.05


def test_a_fast_in_memory_loader_does_not_read_input_bound():
    # 스텝이 로더의 고정 비용(색인 하나, 수십 µs)보다 훨씬 크게: 작은 모델로는 그 비용만으로
    # 미리 읽은 배치가 10% 빨라 "입력에 묶임"으로 읽혔습니다(한 번은 1.06–1.16배).
    torch.manual_seed(0)
    layers = [torch.nn.Linear(16, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(1)
    # 미리 만든 배치의 목록: 로더는 색인 하나로 배치를 내줍니다(collate도 없습니다).
    batches = [(torch.randn(256, 16), torch.randn(256, 1)) for _ in range(8)]
    loader = DataLoader(batches, batch_size=None)
    result = fixes.measure_input_bound(
        training_step(model, optimizer), loader, model=model, optimizer=optimizer, budget_s=3.0
    )
    assert result["input_bound"] is False, result
    assert result["verdict"] != "faster"


def test_measuring_input_bound_leaves_model_optimizer_and_random_state_as_they_were():
    model, optimizer = small_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    batches = [(torch.randn(4, 16), torch.randn(4, 1)) for _ in range(3)]
    torch.manual_seed(5)
    fixes.measure_input_bound(
        training_step(model, optimizer),
        DataLoader(batches, batch_size=None),
        model=model,
        optimizer=optimizer,
        budget_s=0.2,
    )
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert optimizer.state_dict()["state"] == {}


def test_payback_batches_is_the_start_cost_over_the_time_saved_per_batch():
    assert fixes.payback_batches(1.0, 0.03, 0.01) == 50
    assert fixes.payback_batches(0.05, 0.03, 0.01) == 3  # 올림
    assert fixes.payback_batches(1.0, 0.01, 0.01) is None  # 아끼지 못하면 되찾지 못합니다
    assert fixes.payback_batches(1.0, 0.01, 0.02) is None


def test_pin_memory_is_a_candidate_only_on_cuda(monkeypatch):
    monkeypatch.setattr(fixes, "candidate_workers", lambda current: 2)
    info = {"num_workers": 0}
    assert fixes.candidate_changes(info, "cpu") == {"num_workers": 2}
    assert fixes.candidate_changes(info, "cuda") == {"num_workers": 2, "pin_memory": True}
    assert "pin_memory=True" in fixes.fix_code({"num_workers": 2, "pin_memory": True})
    assert "persistent_workers=True" in fixes.fix_code({"num_workers": 2})
    assert "pin_memory" not in fixes.fix_code({"num_workers": 2})


def test_candidate_loaders_keep_their_workers_between_rounds():
    recipe = {
        "dataset": list(range(8)),
        "collate_fn": None,
        "worker_init_fn": None,
        "multiprocessing_context": None,
        "timeout": 0,
        "num_workers": 0,
        "pin_memory": False,
        "batch_size": 2,
        "drop_last": False,
        "batch_sampler": None,
        "prefetch_factor": None,
    }
    assert fixes.loader_like(recipe, num_workers=2).persistent_workers is True
    assert fixes.loader_like(recipe).persistent_workers is False  # 워커가 없으면 뜻이 없습니다


def test_the_stream_drains_what_the_workers_read_ahead_before_timing():
    loader = DataLoader(list(range(40)), batch_size=2, num_workers=0)
    stream = fixes.BatchStream(loader)
    assert stream.queued() == 0
    stream.start()
    # start()가 첫 배치를 읽었고, 한 바퀴(20개) 뒤에는 새 바퀴를 엽니다.
    seen = [stream.next() for _ in range(25)]
    assert seen[18].tolist() == [38, 39] and seen[19].tolist() == [0, 1]

    class Ahead:
        num_workers, prefetch_factor = 2, 3

    assert fixes.BatchStream(Ahead()).queued() == 6


def test_each_timed_round_first_discards_the_batches_read_ahead():
    class Counting:
        calls = 0

        def queued(self):
            return 3

        def next(self):
            Counting.calls += 1

    fixes.fetch_timer(Counting(), batches=5)()
    assert Counting.calls == 3 + 5
