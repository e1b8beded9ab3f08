"""snippets/beyond_memory.py의 테스트: 조각으로 나눈 손실이 한 번에 계산한 손실과 같은 값과 변화도를
내는지, 최대 메모리가 실제로 줄어드는지, GPU 함수가 CPU에서 한국어로 멈추는지 봅니다."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from measuring import memory
from snippets import beyond_memory as mem

# (토큰 수, d_model, 어휘, 조각 수): 나누어떨어지지 않는 토큰 수와 조각 하나짜리도 넣습니다.
SHAPES = [(64, 8, 50, 8), (37, 5, 11, 4), (16, 16, 128, 1), (100, 4, 257, 7)]


def loss_and_grads(fn, shape, dtype=torch.float64, **kwargs):
    tokens, d_model, vocab, _ = shape
    hidden, weight, targets = mem.make_inputs("cpu", tokens, d_model, vocab, seed=tokens)
    hidden, weight = (t.detach().to(dtype).requires_grad_() for t in (hidden, weight))
    loss = fn(hidden, weight, targets, **kwargs)
    return loss, hidden.grad, weight.grad


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_chunked_loss_matches_all_at_once(shape):
    ref = loss_and_grads(mem.loss_all_at_once, shape)
    got = loss_and_grads(mem.loss_in_chunks, shape, chunks=shape[3])
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_inputs_have_padding():
    _, _, targets = mem.make_inputs("cpu", 200, 4, 16)
    assert 0 < int((targets == mem.IGNORE).sum()) < 200


def test_mean_per_chunk_would_be_wrong():
    # 조각마다 평균을 낸 뒤 평균하면, 조각마다 패딩 수가 달라 한 번에 계산한 값과 다릅니다.
    hidden, weight, targets = mem.make_inputs("cpu", 64, 8, 50, seed=3)
    per_chunk = torch.stack([
        torch.nn.functional.cross_entropy(h @ weight.T, t, ignore_index=mem.IGNORE)
        for h, t in zip(hidden.chunk(8), targets.chunk(8), strict=True)
    ]).mean()  # fmt: skip
    whole = mem.loss_all_at_once(hidden, weight, targets)
    assert abs(per_chunk.item() - whole.item()) > 1e-4


PEAKS = """
import json, torch
from measuring import memory
from snippets import beyond_memory as mem
torch.set_num_threads(1)
sizes = {"tokens": 512, "d_model": 16, "vocab": 32768}
peaks = {}
for fn in (mem.loss_all_at_once, mem.loss_in_chunks):
    args = mem.make_inputs("cpu", **sizes)
    fn(*args)  # 첫 호출의 변화도 할당을 최대 메모리에서 뺍니다.
    peaks[fn.__name__] = memory.peak_mib(lambda: fn(*args), torch.device("cpu"))
print(json.dumps(peaks))
"""


def test_chunked_loss_lowers_the_peak_memory():
    # 로짓 64 MiB(토큰 512 × 어휘 32768 × 4바이트). 한 번에 계산하면 로짓, log_softmax 출력,
    # 그 변화도가 함께 있고, 조각 16개를 체크포인팅하면 한 번에 조각 하나의 것만 있습니다.
    # 체크포인팅 없이 조각만 나누면 모든 조각의 로짓이 역전파까지 남아 이 경계를 넘습니다.
    # 앞선 테스트가 남긴 힙과 스레드가 섞이지 않게 새 프로세스에서 잽니다.
    if memory.peak_mib(lambda: None, torch.device("cpu")) is None:
        pytest.skip(
            "이 운영체제에서는 CPU 최대 메모리를 잴 수 없습니다(Linux의 glibc가 필요합니다)"
        )
    assert mem.CHUNKS == 16
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", PEAKS], cwd=root, env=env,
                            capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    peaks = json.loads(result.stdout.strip().splitlines()[-1])
    assert peaks["loss_all_at_once"] > mem.logits_mib(512, 32768)
    # 이 CPU에서 잰 값: 한 번에 약 4 × 로짓, 조각 16개(체크포인팅) 0.8–1.3 × 로짓(할당기가
    # 메모리를 언제 돌려주는지에 따라), 체크포인팅 없이 조각만 나누면 약 2 × 로짓. 경계는 그 사이.
    assert peaks["loss_in_chunks"] < 1.5 * mem.logits_mib(512, 32768)


def test_logits_mib_counts_tokens_times_vocab():
    assert mem.logits_mib(1024, 32768) == 128
    assert mem.logits_mib(1024, 32768, bytes_per_value=2) == 64


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA GPU가 있으면 멈추지 않습니다")
@pytest.mark.parametrize("fn", [mem.cuda_peak_mib, mem.record_memory_snapshot])
def test_gpu_helpers_stop_with_a_korean_message_on_cpu(fn):
    with pytest.raises(RuntimeError, match="CUDA GPU가 필요합니다"):
        fn(lambda: None)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA GPU에서만 확인합니다")
def test_cuda_reserved_is_at_least_allocated_and_snapshot_is_written(tmp_path):
    args = mem.make_inputs("cuda", 1024, 64, 8192)
    peak = mem.cuda_peak_mib(mem.loss_all_at_once, *args)
    assert peak["reserved"] >= peak["allocated"] >= mem.logits_mib(1024, 8192)
    path = mem.record_memory_snapshot(
        mem.loss_in_chunks, *args, path=str(tmp_path / "snapshot.pickle")
    )
    assert (tmp_path / "snapshot.pickle").stat().st_size > 0 and path.endswith(".pickle")


def test_main_runs_on_cpu(capsys):
    mem.main("cpu")
    out = capsys.readouterr().out
    assert "loss_all_at_once" in out and "loss_in_chunks" in out
