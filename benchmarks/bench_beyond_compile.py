"""더 나아가기 1 벤치마크: 학습 한 스텝을 eager와 torch.compile(기본 모드)로 잽니다.

컴파일한 쪽은 빈 캐시 폴더(TORCHINDUCTOR_CACHE_DIR)에서 처음 컴파일한 첫 호출 시간(차가운 캐시)과,
같은 폴더로 다시 컴파일한 첫 호출 시간(따뜻한 캐시)을 시간 밖에서 한 번씩 잽니다. 평소 스텝의
시간은 그다음에 잽니다. 천장은 두지 않습니다: 같은 모델을 더 빠르게 하는 한계가 하나로 정해지지
않습니다. 평소 pytest(quick)는 2코어에서 수십 초 걸리는 Inductor 대신 aot_eager로 흐름만 봅니다.
"""

import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir
from torch._inductor.utils import clear_caches

from snippets import beyond_compile as bc

PAGE = "compile"

# 배치 크기, d_model, 층 수
SIZES = {"quick": (8, 16, 1), "cpu": (256, 256, 2), "cuda": (4096, 1024, 4)}


def inputs(device, size_key):
    batch_size, d_model, num_layers = SIZES[size_key]
    return bc.make_inputs(device, batch_size, d_model, num_layers)


def params_of(size_key):
    batch_size, d_model, num_layers = SIZES[size_key]
    return {"batch_size": batch_size, "d_model": d_model, "layers": num_layers}


@pytest.mark.measures("step")
def test_eager_step(measure, bench_device, size_key):
    model, x, y = inputs(bench_device, size_key)
    bc.train_step(model, x, y)
    loss = measure(
        bc.train_step,
        model,
        x,
        y,
        key="eager",
        group="step",
        variant="eager",
        role="baseline",
        params=params_of(size_key),
        per_call={"samples": x.shape[0]},
    )
    assert torch.isfinite(loss)


@pytest.mark.measures("step")
def test_compiled_step(measure, bench_device, size_key, tmp_path):
    # 빈 캐시 폴더에서 시작해야 차가운 캐시의 컴파일 시간입니다. temporary_cache_dir는 폴더를 바꾸고
    # 이 프로세스의 메모리 캐시도 비웁니다(끝나면 원래 폴더로 되돌립니다).
    with temporary_cache_dir(str(tmp_path)):
        measure_compiled_step(measure, bench_device, size_key)


def measure_compiled_step(measure, bench_device, size_key):
    backend = "aot_eager" if size_key == "quick" else "inductor"
    model, x, y = inputs(bench_device, size_key)
    torch._dynamo.reset()
    counters.clear()
    cold_s = bc.first_call_seconds(bc.compile_model(model, backend=backend), x, y)
    cold_counts = bc.fx_graph_cache_counts()
    # 같은 캐시 폴더로 처음부터 다시 컴파일합니다. 메모리 캐시를 비워, 새 프로세스가 같은 폴더를
    # 쓰는 경우처럼 디스크의 캐시만 읽게 합니다.
    torch._dynamo.reset()
    clear_caches()
    counters.clear()
    compiled = bc.compile_model(model, backend=backend)
    warm_s = bc.first_call_seconds(compiled, x, y)
    warm_counts = bc.fx_graph_cache_counts()
    graphs = counters["stats"]["unique_graphs"]
    loss = measure(
        bc.train_step,
        compiled,
        x,
        y,
        key="compiled",
        group="step",
        variant="compiled",
        role="recommended",
        params=params_of(size_key),
        per_call={"samples": x.shape[0]},
        metrics={"compile_s": cold_s},
    )
    assert torch.isfinite(loss)
    assert counters["stats"]["unique_graphs"] == graphs, "재는 동안 다시 컴파일했습니다"
    measure.computed(
        key="cold-cache",
        group="first-call",
        variant="cold-cache",
        role="baseline",
        params=params_of(size_key),
        metrics={"compile_s": cold_s},
    )
    measure.computed(
        key="warm-cache",
        group="first-call",
        variant="warm-cache",
        role="recommended",
        params=params_of(size_key),
        metrics={"compile_s": warm_s},
    )
    if backend == "inductor":
        assert cold_counts[1] > 0, "차가운 캐시인데 캐시에서 읽었습니다"
        assert warm_counts == (cold_counts[1], 0), "따뜻한 캐시인데 다시 컴파일했습니다"
