"""snippets/lightning_intro.py의 테스트: Lightning이 순수 PyTorch 루프와 똑같이 학습하는지."""

import pytest
import torch
from torch.utils.data import DataLoader

from snippets import lightning_intro as intro


def assert_same_weights(a, b):
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        torch.testing.assert_close(x.cpu(), y.cpu(), rtol=1e-5, atol=1e-6, msg=name)


@pytest.mark.parametrize(
    ("samples", "features", "classes", "batch_size"),
    [(64, 5, 2, 16), (100, 20, 3, 32), (96, 8, 7, 96)],
)
def test_lightning_trains_exactly_like_the_plain_loop(samples, features, classes, batch_size):
    dataset = intro.make_dataset(samples, features, classes, seed=3)
    untouched = intro.make_model(features, classes, seed=1)
    plain = intro.train_plain_pytorch(
        intro.make_model(features, classes, seed=1), DataLoader(dataset, batch_size), 2, "cpu"
    )
    lit = intro.train_lightning(
        intro.make_model(features, classes, seed=1), DataLoader(dataset, batch_size), 2, "cpu"
    )
    assert_same_weights(plain, lit)
    # 학습이 실제로 일어났는지도 확인합니다. 둘 다 아무것도 안 했다면 위 비교는 의미가 없습니다.
    assert not torch.equal(plain[0].weight, untouched[0].weight)


def test_training_learns_the_rule():
    dataset = intro.make_dataset()
    model = intro.train_plain_pytorch(intro.make_model(), DataLoader(dataset, 32), 3, "cpu")
    assert intro.accuracy(model, dataset) > 0.7


def test_main_runs_on_cpu(capsys):
    intro.main("cpu", epochs=1)
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "가중치가 같습니다" in out
