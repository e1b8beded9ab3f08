"""팁 6 벤치마크: 같은 학습 한 단계를 fp32, tf32, fp16(+GradScaler), bf16으로 잽니다.

모델은 스니펫의 TinyTransformer입니다. GPU에서는 d_model 1024, 4층, 배치 32×512 토큰으로
H200을 채우고, CPU에서는 작은 크기를 씁니다. 한 단계의 연산 수는 FlopCounterMode로 시간 밖에서
한 번 세어 TFLOP/s를 냅니다. GPU에서는 정밀도마다 최고 메모리도 시간 밖에서 한 번 잽니다
(기사는 메모리가 절반이 된다고 합니다). 천장은 같은 실행에서 잰 큰 bf16 행렬 곱입니다.
"""

import functools
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from measuring import ceilings
from snippets import tip6_16bit as tip6

PAGE = "tip6"

# 모델과 배치의 크기. GPU는 d_model 1024, 4층, 32×512 토큰(fp32 스텝 하나에 수십 ms)입니다.
# CPU는 d_model 256, 2층, 8×128 토큰(스텝 하나가 약 10 GFLOP)입니다. bf16·fp16 명령이 없는 CPU는
# 16비트를 흉내 내어 fp32보다 수십 배 느리므로, 그런 2코어 CPU에서도 16비트 스텝이 몇 초 안에
# 끝나는 크기입니다. 크기에 따라 결론이 어떻게 바뀌는지는 폭 스윕(아래)이 보여 줍니다.
SIZES = {
    "cuda": {"d_model": 1024, "nhead": 16, "num_layers": 4, "batch_size": 32, "seq_len": 512},
    "cpu": {"d_model": 256, "nhead": 4, "num_layers": 2, "batch_size": 8, "seq_len": 128},
    "quick": {"d_model": 16, "nhead": 2, "num_layers": 1, "batch_size": 4, "seq_len": 8},
}

# 천장 행렬 곱의 크기 n(n×n @ n×n). GPU의 8192는 bf16 행렬 하나가 128 MiB라 L2보다 훨씬 큽니다.
MATMUL_SIZES = {"cuda": 8192, "cpu": 2048, "quick": 64}

# (역할, 비교할 천장의 key). 기준은 fp32, 권장 방식은 스니펫의 bf16입니다.
PRECISIONS = {
    "fp32": ("baseline", None),
    "tf32": ("other", "matmul-tf32"),
    "fp16": ("other", None),
    "bf16": ("recommended", "matmul-bf16"),
}

# CPU에는 fp16 행렬 곱 하드웨어가 없어 fp16 스텝 한 번에 수십 초가 듭니다. 3라운드만 함께 재고
# (구간의 신뢰 수준이 결과 파일에 함께 적힙니다) 메모리는 재지 않습니다.
SLOW_ON_CPU = {("fp16", "cpu")}

NO_TF32_ON_CPU = (
    "CUDA GPU가 없어서 재지 않았습니다. TF32는 NVIDIA GPU(Ampere 이후)의 텐서 코어가 "
    "fp32 행렬 곱을 계산하는 방식이라, CPU에서 tf32 단계는 fp32 단계와 똑같이 계산합니다."
)
NO_BF16_CEILING_ON_CPU = (
    "이 CPU에는 bf16 행렬 곱 명령(AVX-512 BF16, AMX)이 없어 bf16 행렬 곱을 흉내 내는 느린 경로로 "
    "계산합니다. 그 속도는 도달할 수 있는 최대가 아니므로 bf16 천장을 재지 않았습니다."
)
NO_TF32_CEILING_ON_CPU = (
    "CUDA GPU가 없어서 TF32 행렬 곱 천장은 재지 않았습니다. TF32는 GPU 텐서 코어의 형식입니다."
)


def group_params(size):
    return {
        "d_model": size["d_model"],
        "layers": size["num_layers"],
        "batch_size": size["batch_size"],
        "seq_len": size["seq_len"],
    }


@functools.cache
def step_flops(device, size_key):
    """fp32 학습 스텝 하나의 연산 수를 셉니다. 정밀도가 달라도 같은 일이므로 한 번만 셉니다."""
    model, x, y = tip6.make_inputs(device, **SIZES[size_key])
    step, optimizer = tip6.make_step("fp32", model)
    with FlopCounterMode(display=False) as counter:
        step(model, optimizer, x, y)
    return counter.get_total_flops()


@pytest.mark.measures("step")
def test_train_step(compare, bench_device, size_key):
    cuda = bench_device.type == "cuda"
    precision_before = torch.backends.cuda.matmul.fp32_precision
    size = SIZES[size_key]
    flops = step_flops(bench_device, size_key)
    group = compare("step", params=group_params(size), per_call={"flops": flops})
    for name, (role, ceiling) in PRECISIONS.items():
        if name == "tf32" and not cuda:
            group.not_measured(NO_TF32_ON_CPU)
            continue
        # 정밀도마다 같은 seed로 새로 만들어 같은 가중치, 같은 배치에서 출발합니다. AdamW 상태를
        # 만드는 첫 스텝은 시간 밖에서 부릅니다(interleave.prepare의 첫 호출).
        model, x, y = tip6.make_inputs(bench_device, **size)
        step, optimizer = tip6.make_step(name, model)
        slow_on_cpu = (name, size_key) in SLOW_ON_CPU
        if ceiling == "matmul-bf16" and not ceilings.bf16_matmul_in_hardware(bench_device):
            ceiling = None  # 흉내 내는 bf16 행렬 곱은 천장이 아닙니다(test_matmul_ceiling).
        group.add(name, step, model, optimizer, x, y, key=f"step-{name}", role=role,
                  ceiling=ceiling, max_rounds=3 if slow_on_cpu else None,
                  memory=not slow_on_cpu)  # fmt: skip
    for loss in group.run().values():
        assert math.isfinite(float(loss))
    assert flops > 0
    # tf32 단계가 전역 설정을 켠 채로 두면 다음 측정이 섞이므로, 원래 값인지 확인합니다.
    assert torch.backends.cuda.matmul.fp32_precision == precision_before


@pytest.mark.measures("ceiling")
def test_matmul_ceiling(compare, bench_device, size_key):
    n = MATMUL_SIZES[size_key]
    group = compare("ceiling")
    if ceilings.bf16_matmul_in_hardware(bench_device):
        ceilings.add_matmul(group, "matmul-bf16", n, torch.bfloat16, bench_device)
    else:
        group.not_measured(NO_BF16_CEILING_ON_CPU)
    if bench_device.type == "cuda":
        ceilings.add_matmul(group, "matmul-tf32", n, torch.float32, bench_device, tf32=True)
    else:
        group.not_measured(NO_TF32_CEILING_ON_CPU)
    for product in group.run().values():
        assert product.shape == (n, n)


# 스윕: 폭(d_model)마다 bf16 autocast 대 fp32 학습 스텝. 2층, 배치 8×64 토큰.
# 크기(계산): 스텝 하나의 행렬 곱 연산은 약 6 × 토큰 × 12·d² × 층 = 6·512·12·d²·2 FLOP이라
# d=512에서 약 19 GFLOP입니다. CPU(2코어, fp32 약 0.1 TFLOP/s)에서 fp32 스텝은 0.2초 남짓이지만,
# bf16 명령이 없는 CPU의 bf16 스텝은 수십 배 느려 10초 가까이 걸리므로 CPU는 512에서 멈춥니다.
# H200(수백 TFLOP/s)에서 d=4096(약 1.2 TFLOP)은 몇 ms입니다. 점 하나에 라운드 예산
# 6초(CPU)/3초(GPU)를 씁니다.
WIDTHS = {
    "quick": [16],
    "cpu": [32, 64, 128, 256, 512],
    "cuda": [256, 512, 1024, 2048, 4096],
}
SWEEP_SHAPE = {"num_layers": 2, "batch_size": 8, "seq_len": 64}


@pytest.mark.sweep("width")
def test_width_sweep(sweep, bench_device, size_key):
    run = sweep("width")
    for width in WIDTHS[size_key]:
        size = {**SWEEP_SHAPE, "d_model": width, "nhead": max(1, width // 64)}
        sides = []
        for name in ("fp32", "bf16"):
            model, x, y = tip6.make_inputs(bench_device, **size)
            step, optimizer = tip6.make_step(name, model)
            step(model, optimizer, x, y)  # 옵티마이저 상태를 만든 평소 스텝부터 잽니다.
            sides.append((step, model, optimizer, x, y))
        params = {
            "layers": size["num_layers"],
            "batch_size": size["batch_size"],
            "seq_len": size["seq_len"],
        }
        losses = run.point(width, *sides, params=params)
        assert all(math.isfinite(float(loss)) for loss in losses)
