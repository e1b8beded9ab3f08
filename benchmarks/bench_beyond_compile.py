"""더 나아가기 1 벤치마크: 학습 스텝을 eager와 torch.compile로, 첫 스텝은 새 프로세스로 잽니다.

- "step": 컴파일이 끝난 뒤 평소 스텝(eager 대 컴파일).
- "first-call": 새 Python 프로세스를 띄워 첫 스텝이 끝날 때까지의 시간(import 포함). 컴파일 없음,
  빈 캐시 폴더, 앞 실행이 채운 캐시 폴더. 독자가 `python train.py`를 다시 실행할 때와 같습니다.
  둘의 차이로 한 번의 컴파일 비용과 본전까지의 스텝 수를 냅니다(guide/pages.toml의 breakeven).
평소 pytest(quick)는 Inductor 대신 aot_eager로 흐름만 보고 새 프로세스는 띄우지 않습니다.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

from snippets import beyond_compile as bc

PAGE = "compile"
ROOT = Path(__file__).resolve().parents[1]

# 배치 크기, d_model, 층 수
SIZES = {"quick": (8, 16, 1), "cpu": (256, 256, 2), "cuda": (4096, 1024, 4)}
# 새 프로세스 하나가 하는 일: 모델을 만들고(컴파일하고) 첫 학습 스텝을 끝냅니다.
FIRST_STEP = """
import sys, torch
from snippets import beyond_compile as bc
device, backend, batch, d_model, layers = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
model, x, y = bc.make_inputs(torch.device(device), batch, d_model, layers)
step_model = model if backend == "none" else bc.compile_model(model, backend=backend)
float(bc.train_step(step_model, x, y))  # 값을 읽어 GPU가 끝나기를 기다립니다.
"""


def params_of(size_key):
    batch_size, d_model, num_layers = SIZES[size_key]
    return {"batch_size": batch_size, "d_model": d_model, "layers": num_layers}


@pytest.mark.measures("step")
def test_steady_step(compare, bench_device, size_key, tmp_path):
    backend = "aot_eager" if size_key == "quick" else "inductor"
    batch_size = SIZES[size_key][0]
    group = compare("step", params=params_of(size_key), per_call={"samples": batch_size})
    # 빈 캐시 폴더에서 컴파일합니다(앞선 실행의 캐시를 읽지 않게). 끝나면 원래 폴더로 돌아갑니다.
    with temporary_cache_dir(str(tmp_path)):
        torch._dynamo.reset()
        counters.clear()
        model, x, y = bc.make_inputs(bench_device, *SIZES[size_key])
        group.add("eager", bc.train_step, model, x, y, role="baseline")
        compiled = bc.compile_model(
            bc.make_inputs(bench_device, *SIZES[size_key])[0], backend=backend
        )
        bc.train_step(compiled, x, y)  # 컴파일은 시간 밖에서 끝냅니다.
        graphs = counters["stats"]["unique_graphs"]
        group.add("compiled", bc.train_step, compiled, x, y, role="recommended")
        for loss in group.run().values():
            assert torch.isfinite(loss)
        assert counters["stats"]["unique_graphs"] == graphs, "재는 동안 다시 컴파일했습니다"


class CacheDirs:
    """빈 캐시(라운드마다 새 폴더)와 채워진 캐시(처음 한 번 채운 폴더)."""

    def __init__(self, root):
        self.root, self.warm = root, os.path.join(root, "warm")
        self.cold = None

    def fresh(self):
        self.cold = tempfile.mkdtemp(dir=self.root, prefix="cold-")


def first_step(device, backend, size, cache_dir):
    """새 프로세스에서 첫 학습 스텝까지. 캐시 폴더는 TORCHINDUCTOR_CACHE_DIR로 넘깁니다."""
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": cache_dir() if callable(cache_dir) else cache_dir,
    }
    command = [sys.executable, "-c", FIRST_STEP, device.type, backend, *map(str, size)]
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=900)


@pytest.mark.measures("first-call")
def test_first_step_in_a_new_process(compare, bench_device, size_key, tmp_path):
    size = SIZES[size_key]
    dirs = CacheDirs(str(tmp_path))
    dirs.fresh()
    # 새 프로세스를 띄우는 라운드는 비싸서(빈 캐시는 CPU에서 수십 초) 세 라운드만 잽니다.
    group = compare("first-call", params=params_of(size_key), max_rounds=3)
    group.add("first-call-eager", first_step, bench_device, "none", size, dirs.warm,
              role="baseline", memory=False, smoke=False)  # fmt: skip
    group.add("cold-cache", first_step, bench_device, "inductor", size, lambda: dirs.cold,
              role="other", memory=False, before_round=dirs.fresh, smoke=False)  # fmt: skip
    group.add("warm-cache", first_step, bench_device, "inductor", size, dirs.warm,
              role="recommended", memory=False, smoke=False)  # fmt: skip
    # 채워진 캐시: 라운드 전에 한 번 컴파일해 폴더를 채웁니다(준비 단계의 첫 호출이 합니다).
    group.run()


# 스윕: 폭에 따라 컴파일한 학습 스텝 대 eager(2층, 배치 256). 점마다 새로 컴파일하므로(CPU에서
# 점 하나에 10–30초) `--sweep`일 때만 잽니다. 스텝의 행렬 곱은 약 6·256·8·d²·2 FLOP이라
# d=2048에서 약 100 GFLOP입니다.
WIDTHS = {
    "quick": [8],
    "cpu": [32, 64, 128, 256, 512, 1024],
    "cuda": [256, 512, 1024, 2048, 4096],
}


@pytest.mark.sweep("width")
def test_width_sweep(sweep, bench_device, size_key, tmp_path):
    backend = "aot_eager" if size_key == "quick" else "inductor"
    batch = SIZES[size_key][0]
    run = sweep("width")
    with temporary_cache_dir(str(tmp_path)):
        for width in WIDTHS[size_key]:
            torch._dynamo.reset()
            model, x, y = bc.make_inputs(bench_device, batch, width, 2)
            compiled = bc.compile_model(
                bc.make_inputs(bench_device, batch, width, 2)[0], backend=backend
            )
            bc.train_step(compiled, x, y)  # 컴파일은 시간 밖에서 끝냅니다.
            losses = run.point(width, (bc.train_step, model, x, y), (bc.train_step, compiled, x, y),
                               params={"layers": 2, "batch_size": batch})  # fmt: skip
            assert all(torch.isfinite(loss) for loss in losses)
