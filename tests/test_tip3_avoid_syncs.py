"""snippets/tip3_avoid_syncs.py의 테스트: 손실을 드물게 읽어도 학습과 손실이 같은지."""

import pytest
import torch

from snippets import tip3_avoid_syncs as tip3


@pytest.mark.parametrize(("batch_size", "features"), [(1, 3), (16, 32), (64, 7)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reading_rarely_gives_the_same_losses_and_weights(batch_size, features, dtype):
    slow_model, slow_opt, batches = tip3.make_training_setup(
        "cpu", steps=8, batch_size=batch_size, features=features, dtype=dtype, seed=5
    )
    fast_model, fast_opt, same_batches = tip3.make_training_setup(
        "cpu", steps=8, batch_size=batch_size, features=features, dtype=dtype, seed=5
    )
    slow_losses = tip3.train_reading_every_step(slow_model, slow_opt, batches)
    fast_losses = tip3.train_reading_rarely(fast_model, fast_opt, same_batches)

    assert len(fast_losses) == 8 and all(isinstance(v, float) for v in fast_losses)
    assert fast_losses == slow_losses
    for a, b in zip(slow_model.parameters(), fast_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # 손실이 실제로 변해야 비교가 의미 있습니다.
    assert len(set(slow_losses)) > 1


def test_loop_without_reading_trains_the_same_weights():
    read_model, read_opt, batches = tip3.make_training_setup("cpu", steps=5, seed=2)
    quiet_model, quiet_opt, same_batches = tip3.make_training_setup("cpu", steps=5, seed=2)
    tip3.train_reading_every_step(read_model, read_opt, batches)
    tip3.train_without_reading(quiet_model, quiet_opt, same_batches)
    for a, b in zip(read_model.parameters(), quiet_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_detach_keeps_the_value_where_it_is():
    # 페이지의 검증 노트: .detach()는 데이터를 옮기지 않고 그래프에서만 떼어 냅니다.
    model, optimizer, [(x, y)] = tip3.make_training_setup("cpu", steps=1)
    loss = tip3.train_step(model, optimizer, x, y)
    detached = loss.detach()
    assert loss.requires_grad and not detached.requires_grad
    assert detached.device == loss.device
    assert detached.data_ptr() == loss.data_ptr()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_count_syncs_without_gpu_stops_with_korean_message():
    setup = tip3.make_training_setup("cpu", steps=1)
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        tip3.count_syncs(tip3.train_reading_every_step, *setup)


def test_main_runs_on_cpu(capsys):
    tip3.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert all(label in out for label in tip3.VARIANTS)
