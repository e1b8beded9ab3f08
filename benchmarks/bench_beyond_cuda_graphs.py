"""더 나아가기 2 벤치마크: 작은 커널이 많은 모델의 추론 한 배치를 eager, compile 기본 모드,
reduce-overhead(CUDA 그래프), torch.cuda.graph 직접 기록으로 잽니다(CUDA 전용).

천장은 따로 두지 않습니다: 커널 실행(launch) 비용을 없애는 것이 목표라, 비교할 하드웨어의 한계가
계산이나 대역폭이 아닙니다. 직접 기록한 그래프가 "컴파일 없이 그래프만" 쓴 경우입니다.
"""

import time

import pytest
import torch

from snippets import beyond_cuda_graphs as cg

PAGE = "cuda-graphs"

# 배치 크기, d_model, 층 수. 작은 행렬을 여러 층 쌓아 커널 실행 비용이 계산보다 크게 합니다.
SIZES = {"quick": (4, 16, 2), "cpu": (16, 256, 8), "cuda": (16, 256, 16)}

NO_CUDA_GRAPHS_ON_CPU = (
    "CUDA GPU가 없어서 재지 않았습니다. CUDA 그래프는 GPU 커널의 실행 순서를 기록해 한 번에 "
    "재생하는 기능이라 CPU에는 없습니다."
)

# 변형 → (역할, 실행할 함수를 만드는 방법). 만드는 데 든 시간(컴파일, 기록)이 한 번의 비용입니다.
VARIANTS = {
    "eager": ("baseline", lambda model, x: model),
    "compile-default": ("other", lambda model, x: cg.compile_default(model)),
    "reduce-overhead": ("recommended", lambda model, x: cg.compile_reduce_overhead(model)),
    "manual-graph": ("other", lambda model, x: cg.capture_cuda_graph(model, x)),
}


@pytest.mark.measures("inference")
def test_inference_batch(compare, bench_device, size_key):
    if bench_device.type != "cuda":
        pytest.skip(NO_CUDA_GRAPHS_ON_CPU)
    batch_size, d_model, num_layers = SIZES[size_key]
    group = compare("inference", params={"batch_size": batch_size, "layers": num_layers,
                    "d_model": d_model}, per_call={"samples": batch_size})  # fmt: skip
    for name, (role, build) in VARIANTS.items():
        model, batches = cg.make_inputs(
            bench_device, batch_size, d_model, num_layers, num_batches=2
        )
        torch._dynamo.reset()
        started = time.perf_counter()
        fn = build(model, batches[0])
        cg.predict_all_safe(fn, batches)  # 컴파일과 기록은 시간 밖에서 끝냅니다.
        torch.cuda.synchronize(bench_device)
        one_time = time.perf_counter() - started
        group.add(name, torch.no_grad()(fn), batches[0], role=role,
                  metrics={"one_time_s": one_time})  # fmt: skip
    for out in group.run().values():
        assert out.shape == (batch_size, d_model)


# 스윕(GPU): 층 수(커널 수)에 따라 reduce-overhead 대 eager. 층마다 작은 행렬 곱과 원소별 연산이라
# 커널 하나가 수 µs이고, 층이 많을수록 실행(launch) 비용이 쌓여 CUDA 그래프의 이득이 커집니다.
LAYERS = {"quick": [1], "cuda": [2, 4, 8, 16, 32, 64]}


@pytest.mark.sweep("kernels")
def test_kernel_count_sweep(sweep, bench_device, size_key):
    if bench_device.type != "cuda":
        pytest.skip(NO_CUDA_GRAPHS_ON_CPU)
    batch_size, d_model, _ = SIZES[size_key]
    run = sweep("kernels")
    for layers in LAYERS[size_key]:
        sides = []
        for name in ("eager", "reduce-overhead"):
            model, batches = cg.make_inputs(
                bench_device, batch_size, d_model, layers, num_batches=2
            )
            torch._dynamo.reset()
            fn = VARIANTS[name][1](model, batches[0])
            cg.predict_all_safe(fn, batches)
            sides.append((torch.no_grad()(fn), batches[0]))
        run.point(layers, *sides, params={"batch_size": batch_size, "d_model": d_model})
