"""snippets/tip1_num_workers.py의 테스트: 워커 수와 상관없이 배치가 같은지, 증강과 규칙을 봅니다."""

import os
import pickle
import subprocess
import sys
import warnings

import pytest
import torch

from snippets import tip1_num_workers as tip1
from tests.site_build import page_quotes

# 작은 데이터셋으로 충분합니다. 길이 13은 어떤 배치 크기에서도 마지막 배치가 덜 차게 합니다.
LENGTH = 13
# 여러 조합을 도는 테스트는 작은 이미지로 빠르게 돌립니다. 기본 크기는 따로 한 번 확인합니다.
SMALL = {"image_size": 64, "crop_size": 56, "out_size": 32}


def all_batches(loader):
    batches = list(loader)
    del loader  # persistent 워커를 바로 끝냅니다.
    return batches


def assert_same_batches(actual, expected):
    assert len(actual) == len(expected)
    for (x, y), (ex, ey) in zip(actual, expected, strict=True):
        assert x.dtype == ex.dtype
        torch.testing.assert_close(x, ex, rtol=0, atol=0)
        torch.testing.assert_close(y, ey, rtol=0, atol=0)


@pytest.mark.parametrize("batch_size", [1, 4, 16])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_fast_loader_gives_the_same_batches_as_slow(batch_size, dtype):
    dataset = tip1.CompressedImageDataset(length=LENGTH, seed=3, dtype=dtype, **SMALL)
    slow = all_batches(tip1.make_slow_loader(dataset, batch_size))
    fast = all_batches(tip1.make_loader(dataset, 2, batch_size))
    assert_same_batches(fast, slow)
    # 배치는 데이터셋이 인덱스마다 만든 샘플을 순서대로 쌓은 것이어야 합니다.
    expected_x = torch.stack([dataset[i][0] for i in range(LENGTH)])
    torch.testing.assert_close(torch.cat([x for x, _ in fast]), expected_x, rtol=0, atol=0)
    assert torch.cat([y for _, y in fast]).tolist() == [i % 8 for i in range(LENGTH)]


def test_make_fast_loader_matches_slow_loader():
    dataset = tip1.CompressedImageDataset(length=LENGTH)
    loader = tip1.make_fast_loader(dataset, batch_size=5, num_gpus=0)
    assert loader.num_workers == tip1.suggested_num_workers(0)
    assert_same_batches(all_batches(loader), all_batches(tip1.make_slow_loader(dataset, 5)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_low_precision_output_is_the_float32_output_cast(dtype):
    full = tip1.CompressedImageDataset(length=4, dtype=torch.float32, **SMALL)
    low = tip1.CompressedImageDataset(length=4, dtype=dtype, **SMALL)
    for i in range(4):
        x, _ = low[i]
        assert x.dtype == dtype
        torch.testing.assert_close(x, full[i][0].to(dtype), rtol=0, atol=0)


def test_sample_shape_dtype_length_and_label():
    dataset = tip1.CompressedImageDataset(length=20, num_images=3, out_size=48)
    assert len(dataset) == 20
    x, y = dataset[17]
    assert x.shape == (3, 48, 48) and x.dtype == torch.float32
    assert y == 17 % 3


def test_output_is_normalized_pixels():
    dataset = tip1.CompressedImageDataset(length=4)
    x = torch.stack([dataset[i][0] for i in range(4)])
    # 정규화를 되돌리면 [0, 1] 범위의 픽셀이어야 합니다(흐림과 크기 줄이기는 가중 평균입니다).
    mean = torch.tensor(tip1.CompressedImageDataset.MEAN).view(1, 3, 1, 1)
    std = torch.tensor(tip1.CompressedImageDataset.STD).view(1, 3, 1, 1)
    pixels = x * std + mean
    assert pixels.min() >= -1e-5 and pixels.max() <= 1 + 1e-5
    # 정규화했으므로 0을 중심으로 양쪽에 값이 있습니다.
    assert x.min() < 0 < x.max()
    assert pixels.std() > 0.05


def test_decode_restores_the_stored_image():
    dataset = tip1.CompressedImageDataset(length=4, num_images=2, seed=5)
    g = torch.Generator().manual_seed(5)
    first = dataset._synthetic_image(g)
    torch.testing.assert_close(dataset.decode(0), first, rtol=0, atol=0)
    torch.testing.assert_close(dataset.decode(2), first, rtol=0, atol=0)
    assert not torch.equal(dataset.decode(1), first)


def test_augmentation_is_deterministic_per_index():
    a = tip1.CompressedImageDataset(length=8, seed=11, **SMALL)
    b = tip1.CompressedImageDataset(length=8, seed=11, **SMALL)
    other_seed = tip1.CompressedImageDataset(length=8, seed=12, **SMALL)
    for i in (0, 5):
        torch.testing.assert_close(a[i][0], a[i][0], rtol=0, atol=0)
        torch.testing.assert_close(a[i][0], b[i][0], rtol=0, atol=0)
        assert not torch.equal(a[i][0], other_seed[i][0])


def test_augmentation_changes_the_image():
    # 이미지 하나만 두면 인덱스마다 같은 이미지에서 다른 자르기·뒤집기가 나와야 합니다.
    dataset = tip1.CompressedImageDataset(length=16, num_images=1, **SMALL)
    samples = [dataset[i][0] for i in range(16)]
    for i in range(1, 16):
        assert not torch.allclose(samples[0], samples[i])


def test_flip_happens_for_some_indices_and_not_others():
    # 자를 여지가 없으면(crop = 원본) 남는 무작위성은 좌우 뒤집기뿐입니다.
    dataset = tip1.CompressedImageDataset(
        length=16, num_images=1, image_size=64, crop_size=64, out_size=32
    )
    plain = dataset.augment(dataset.decode(0), torch.Generator().manual_seed(0))
    flipped_count = 0
    for i in range(16):
        x, _ = dataset[i]
        if torch.allclose(x, plain, atol=1e-5):
            continue
        torch.testing.assert_close(x, plain.flip(-1), atol=1e-5, rtol=0)
        flipped_count += 1
    assert 0 < flipped_count < 16
    assert not torch.allclose(plain, plain.flip(-1), atol=1e-3)


def test_dataset_survives_pickling_for_spawned_workers():
    # macOS·Windows의 spawn 워커는 데이터셋을 pickle로 받습니다.
    dataset = tip1.CompressedImageDataset(length=4, dtype=torch.bfloat16, **SMALL)
    copy = pickle.loads(pickle.dumps(dataset))
    torch.testing.assert_close(copy[3][0], dataset[3][0], rtol=0, atol=0)


def test_article_rule():
    assert [tip1.article_num_workers(n) for n in (0, 1, 2, 8)] == [0, 4, 8, 32]


@pytest.mark.parametrize(
    ("num_gpus", "cores", "expected"),
    [(1, 2, 2), (1, 16, 4), (2, 16, 8), (8, 16, 16), (0, 16, 4), (0, 2, 2), (0, 1, 1)],
)
def test_suggestion_is_the_rule_bounded_by_cores(num_gpus, cores, expected):
    assert tip1.suggested_num_workers(num_gpus, cores=cores) == expected


@pytest.mark.parametrize(
    ("num_gpus", "cores", "local_processes", "expected"),
    # GPU 8개, DDP 프로세스 8개: 규칙은 컴퓨터 전체 32개이고, DataLoader 하나는 그 1/8입니다.
    [(8, 64, 8, 4), (8, 16, 8, 2), (8, 4, 8, 1), (2, 16, 2, 4), (8, 64, 1, 32)],
)
def test_suggestion_divides_by_local_ddp_processes(num_gpus, cores, local_processes, expected):
    assert tip1.suggested_num_workers(num_gpus, cores, local_processes) == expected


def test_local_process_count_reads_torchrun_env(monkeypatch):
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert tip1.local_process_count() == 1
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert tip1.local_process_count() == 4
    # 인자를 주지 않으면 torchrun이 넣어 준 프로세스 수로 나눕니다.
    assert tip1.suggested_num_workers(4, cores=16) == 4


def test_usable_cores_respects_affinity(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        assert tip1.usable_cpu_cores() == len(os.sched_getaffinity(0))
        monkeypatch.delattr(os, "sched_getaffinity")
    assert tip1.usable_cpu_cores() == os.cpu_count()


def test_suggested_workers_never_trigger_torch_warning():
    dataset = tip1.CompressedImageDataset(length=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = tip1.make_loader(dataset, tip1.suggested_num_workers(8), 1)
    assert loader.num_workers == min(32, tip1.usable_cpu_cores())


def test_make_loader_settings():
    dataset = tip1.CompressedImageDataset(length=2)
    none = tip1.make_loader(dataset, 0, 4)
    assert none.num_workers == 0 and none.prefetch_factor is None
    assert not none.persistent_workers
    two = tip1.make_loader(dataset, 2, 4)
    assert two.num_workers == 2 and two.prefetch_factor == 2 and two.persistent_workers
    assert two.batch_size == 4


@pytest.mark.skipif(tip1.usable_cpu_cores() >= 8, reason="코어가 8개 미만일 때만 경고합니다")
def test_article_loader_works_but_torch_warns_on_few_cores():
    dataset = tip1.CompressedImageDataset(length=3)
    # 페이지의 검증 노트가 인용하는 경고입니다.
    with pytest.warns(
        UserWarning, match="This DataLoader will create 8 worker processes in total"
    ) as record:
        loader = tip1.article_loader(dataset)
    assert any(page_quotes("tips/01-num-workers.md", str(w.message)) for w in record)
    assert loader.num_workers == 8 and loader.batch_size == 1


def test_main_runs_on_cpu(capsys):
    tip1.main("cpu", num_batches=2, batch_size=8)
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "num_workers=0: 초당" in out
    assert f"num_workers={min(2, tip1.usable_cpu_cores())}: 초당" in out
    assert "원문의 규칙(4 × GPU 수): GPU 0개 → num_workers=0" in out
    assert f"제안: num_workers={tip1.suggested_num_workers(0)}" in out


SPAWN_SCRIPT = """
import torch
from torch.utils.data import DataLoader

from snippets.tip1_num_workers import CompressedImageDataset


def run():
    # 이미지 하나로 작게 둡니다. pickle한 데이터셋이 파이프 버퍼(대개 64 KiB)보다 크면 가드 없는
    # 경우가 오류 대신 멈춤(hang)으로 끝나기도 합니다(CPython gh-118981).
    dataset = CompressedImageDataset(
        length=4, num_images=1, image_size=64, crop_size=56, out_size=32
    )
    loader = DataLoader(dataset, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    (x, _), = list(loader)
    assert torch.equal(x, torch.stack([dataset[i][0] for i in range(4)]))
    print("ok")


{call}
"""


@pytest.mark.parametrize(
    ("call", "works"),
    [('if __name__ == "__main__":\n    run()', True), ("run()", False)],
    ids=["with-guard", "without-guard"],
)
def test_spawned_workers_need_the_main_guard(tmp_path, call, works):
    # macOS·Windows의 기본 시작 방식(spawn)을 리눅스에서도 골라 페이지의 설명을 확인합니다.
    script = tmp_path / "train.py"
    script.write_text(SPAWN_SCRIPT.format(call=call), encoding="utf-8")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": root, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if works:
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"
    else:
        assert result.returncode != 0
        assert "finished its bootstrapping phase" in result.stderr
        assert "exited unexpectedly" in result.stderr
