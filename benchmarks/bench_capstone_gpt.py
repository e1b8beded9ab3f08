"""전부 합치면 벤치마크: GPT 학습 하나에 팁을 하나씩 더하며 단계마다 초당 토큰 수와 MFU를 잽니다.

- 단계마다 새 모델을 같은 seed로 만들고, 먼저 `loss_steps`번 학습합니다. 이 워밍업에 컴파일과
  워커 시작이 들어가고, 끝의 손실을 "loss"로 기록합니다(같은 스텝 수, 같은 데이터). 속도가 올라도
  학습이 망가졌다면 이 값이 드러냅니다.
- 그다음 `steps_per_round`번의 스텝을 한 라운드로 `rounds`번 재고 중앙값을 씁니다.
- 토큰당 연산 수는 6N + 12·L·H·Q·T 공식입니다(tests가 FlopCounterMode와 맞춰 봅니다). 어휘를
  덧붙인 단계도 원래 어휘로 셉니다: 덧붙인 자리의 계산은 쓸모 있는 일이 아니기 때문입니다.
- MFU의 분모(천장)는 모든 단계에 하나입니다. GPU는 장치 이름으로 찾은 밀집 bf16 최고 성능(공개값,
  계산값), CPU는 같은 실행에서 잰 큰 행렬 곱(bf16 하드웨어가 있으면 bf16, 없으면 fp32)입니다.
"""

import dataclasses
import gc
import time

import pytest
import torch
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

from benchmarks import environment
from snippets import capstone_gpt as cap

PAGE = "capstone"

# GPU: GPT-2 small(124M) 그대로, 배치 8×1024(단계 9부터 16). H200에서 컴파일을 빼면 1분 안쪽입니다.
# CPU: 2코어에서 전체가 2분쯤에 끝나는 작은 GPT(4층, 폭 256, 길이 128, 어휘 4097 = 4096 + 특수
# 토큰 1개: 50257처럼 어중간한 크기). 배치 8×128이면 기준 fp32 스텝이 0.5초 안쪽입니다.
# quick: 평소 pytest가 모든 단계를 한 번씩 몇 초 안에 돌리는 크기.
SIZES = {
    "cuda": {
        "model": {"vocab_size": 50257, "seq_len": 1024, "n_layer": 12, "n_head": 12, "n_embd": 768},
        "batch_size": 8,
        "batch_multiplier": 2,
        "workers": 4,
        "loss_steps": 8,
        "steps_per_round": 2,
        "rounds": 5,
        "compile_backend": "inductor",
        "profile_steps": 2,
    },
    "cpu": {
        "model": {"vocab_size": 4097, "seq_len": 128, "n_layer": 4, "n_head": 4, "n_embd": 256},
        "batch_size": 8,
        "batch_multiplier": 2,
        "workers": 1,
        "loss_steps": 4,
        "steps_per_round": 1,
        "rounds": 7,
        "compile_backend": "inductor",
        "profile_steps": 1,
        "matmul_n": 2048,
    },
    "quick": {
        "model": {"vocab_size": 257, "seq_len": 16, "n_layer": 1, "n_head": 2, "n_embd": 32},
        "batch_size": 2,
        "batch_multiplier": 2,
        "workers": 0,
        "loss_steps": 2,
        "steps_per_round": 1,
        "rounds": 1,
        "compile_backend": "eager",  # 그래프를 잡기만 합니다(Inductor는 tests가 한 번 확인)
        "profile_steps": 0,  # 프로파일러의 첫 준비는 몇 초라서 빼고, tests가 따로 확인합니다
        "matmul_n": 64,
    },
}

STAGE_KEYS = [key for key, _, _ in cap.cumulative_stages()]
FINAL = STAGE_KEYS[-1]
CPU_CEILING = "matmul"
GPU_CEILING = "peak-bf16"
# 단계 사이에 쓰는 도구(팁 7): 기준과 마지막 단계의 프로파일을 모아 마지막 단계 결과에 붙입니다.
PROFILES = {}


def config(size):
    return cap.GPTConfig(**size["model"])


def stages(size):
    return cap.cumulative_stages(size["workers"], size["batch_multiplier"])


def free_memory(device):
    if device.type == "cuda":  # 앞 단계의 모델이 GPU 메모리와 최고점에 섞이지 않게 합니다.
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def ceiling_key(device):
    """이 장치의 MFU 분모가 되는 천장 측정의 key입니다. 모르는 GPU면 None(MFU 없음)."""
    if device.type == "cuda":
        return GPU_CEILING if cap.peak_bf16_tflops(device) else None
    return CPU_CEILING


def cpu_ceiling_dtype():
    """CPU에 bf16 하드웨어 연산(AVX-512 BF16, AMX)이 있으면 bf16 행렬 곱이 더 높은 천장입니다."""
    bf16_hardware = {"avx512_bf16", "amx_bf16"} & set(environment.cpu_flags())
    return torch.bfloat16 if bf16_hardware else torch.float32


def model_params(cfg, batch_size):
    return {
        "n_layer": cfg.n_layer,
        "n_head": cfg.n_head,
        "n_embd": cfg.n_embd,
        "seq_len": cfg.seq_len,
        "vocab_size": cfg.vocab_size,
        "batch_size": batch_size,
    }


def warm_up(job, size, device):
    """시간 밖의 워밍업: 컴파일, 워커 시작, 첫 할당. 끝의 손실과 GPU 최고 메모리를 돌려줍니다.

    컴파일하는 단계는 첫 스텝(컴파일이 일어나는 스텝)의 시간을 compile_s로 남깁니다.
    """
    free_memory(device)
    start = time.perf_counter()
    cap.train_steps(job, 1)
    first_step_s = time.perf_counter() - start
    loss = cap.train_steps(job, size["loss_steps"] - 1)
    metrics = {"loss": loss}
    if job.stage.compile:
        metrics["compile_s"] = first_step_s
    if device.type == "cuda":
        metrics["peak_memory_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
    return metrics


def timed_training(measure, job, size, *, key, group, variant, role, params, metrics, extra=None):
    steps = size["steps_per_round"]
    tokens = job.tokens_per_step * steps
    return measure(
        cap.train_steps,
        job,
        steps,
        key=key,
        group=group,
        variant=variant,
        role=role,
        params=params | {"steps": steps},
        per_call={"tokens": tokens, "flops": tokens * cap.flops_per_token(job.cfg)},
        metrics=metrics,
        ceiling=ceiling_key(job.device),
        rounds=size["rounds"],
        extra=extra,
    )


# --- 천장(MFU의 분모) ----------------------------------------------------------------------------


@pytest.mark.measures("ceiling")
def test_ceiling(measure, bench_device, size_key):
    size = SIZES[size_key]
    if bench_device.type == "cuda":
        peak = cap.peak_bf16_tflops(bench_device)
        if peak is None:
            pytest.skip(
                f"{torch.cuda.get_device_name(bench_device)}의 공개된 밀집 bf16 최고 성능을 이 "
                "벤치마크가 모릅니다. 추측하지 않고 MFU 없이 초당 토큰 수만 기록합니다."
            )
        measure.computed(
            key=GPU_CEILING,
            group="ceiling",
            variant=GPU_CEILING,
            role="ceiling",
            metrics={"tflop_per_s": peak},
        )
        return
    n, dtype = size["matmul_n"], cpu_ceiling_dtype()
    a = torch.randn(n, n, dtype=dtype)
    b = torch.randn(n, n, dtype=dtype)
    product = measure(
        torch.matmul,
        a,
        b,
        key=CPU_CEILING,
        group="ceiling",
        variant=f"matmul-{str(dtype).removeprefix('torch.')}",
        role="ceiling",
        params={"n": n},
        per_call={"flops": 2 * n**3},
    )
    assert product.shape == (n, n)


# --- 단계별 처리량(폭포 차트) ---------------------------------------------------------------------


@pytest.fixture
def cold_compile_cache(tmp_path):
    """빈 Inductor 캐시 폴더에서 컴파일합니다. 같은 컴퓨터에서 앞서 돈 실행의 캐시가 남아 있으면
    compile_s가 캐시를 읽는 시간이 되어 버립니다(처음 컴파일하는 시간도 결과입니다)."""
    with temporary_cache_dir(str(tmp_path)):
        yield


@pytest.mark.measures("waterfall")
@pytest.mark.parametrize("index", range(len(STAGE_KEYS)), ids=STAGE_KEYS)
def test_stage(measure, bench_device, size_key, cold_compile_cache, index):
    size = SIZES[size_key]
    cfg = config(size)
    key, _, stage = stages(size)[index]
    job = cap.make_job(
        stage, cfg, bench_device, size["batch_size"], compile_backend=size["compile_backend"]
    )
    try:
        metrics = warm_up(job, size, bench_device)
        extra = None
        if key == FINAL and size["profile_steps"]:
            # 마지막 단계의 프로파일은 워밍업 직후에 떠서 기준의 것과 나란히 붙입니다.
            PROFILES[key] = cap.profile_steps(job, size["profile_steps"])
            extra = {"report_excerpt": profile_excerpt()}
        role = {0: "baseline", len(STAGE_KEYS) - 1: "recommended"}.get(index, "other")
        loss = timed_training(
            measure,
            job,
            size,
            key=f"stage{index:02d}-{key}",
            group="waterfall",
            variant=key,
            role=role,
            params=model_params(cfg, job.tokens_per_step // cfg.seq_len)
            | {"num_workers": stage.num_workers, "stage": index},
            metrics=metrics,
            extra=extra,
        )
        if index == 0 and size["profile_steps"]:
            PROFILES[key] = cap.profile_steps(job, size["profile_steps"])
    finally:
        job.close()
    assert metrics["loss"] == metrics["loss"] and loss == loss  # NaN이면 학습이 망가진 것입니다.


def profile_excerpt():
    parts = []
    for key, title in ((STAGE_KEYS[0], "기준 단계(0)"), (FINAL, "마지막 단계")):
        if key in PROFILES:
            parts.append(f"[{title}]\n{PROFILES[key].strip()}")
    return "\n\n".join(parts)


# --- 곁가지: 활성화 체크포인팅 ------------------------------------------------------------------


@pytest.mark.measures("checkpointing")
@pytest.mark.parametrize("checkpointing", [False, True], ids=["without", "with"])
def test_checkpointing(measure, bench_device, size_key, checkpointing):
    # 마지막 단계에서 컴파일만 뺀 설정(즉시 실행)입니다. 저장된 활성값은 즉시 실행에서만 셀 수
    # 있고, CPU 측정에 컴파일을 한 번만 넣으려는 것입니다.
    size = SIZES[size_key]
    cfg = config(size)
    final = stages(size)[-1][2]
    stage = dataclasses.replace(final, compile=False, checkpointing=checkpointing)
    job = cap.make_job(stage, cfg, bench_device, size["batch_size"])
    try:
        metrics = warm_up(job, size, bench_device)
        metrics["saved_activation_mib"] = cap.saved_activation_mib(job)
        timed_training(
            measure,
            job,
            size,
            key="checkpointing" if checkpointing else "no-checkpointing",
            group="checkpointing",
            variant="checkpointing" if checkpointing else "no-checkpointing",
            role="recommended" if checkpointing else "baseline",
            params=model_params(cfg, job.tokens_per_step // cfg.seq_len),
            metrics=metrics,
        )
    finally:
        job.close()
    assert metrics["saved_activation_mib"] > 0


# --- 곁가지: float8 학습 -----------------------------------------------------------------------


def float8_problem(device):
    if device.type != "cuda":
        return (
            "CUDA GPU가 없어서 재지 않았습니다. float8 학습은 float8 텐서 코어가 있는 GPU(Ada, "
            "Hopper 이후)의 행렬 곱을 씁니다. CPU에는 해당 없음입니다."
        )
    if torch.cuda.get_device_capability(device) < (8, 9):
        return "이 GPU에는 float8 텐서 코어가 없습니다(Ada, Hopper 이후에만 있음). 해당 없음입니다."
    try:
        import torchao.float8  # noqa: F401
    except ImportError:
        return "torchao 패키지가 설치되어 있지 않아 재지 않았습니다(pip install torchao)."
    return None


@pytest.mark.measures("float8")
@pytest.mark.parametrize("float8", [False, True], ids=["bf16", "float8"])
def test_float8(measure, bench_device, size_key, float8):
    # 마지막 단계에서 컴파일만 뺀 설정끼리 비교합니다. 컴파일을 한 번 더 하면 GPU 측정 시간 한도를
    # 넘기 때문입니다. float8의 배율 계산과 형식 변환은 컴파일이 합쳐 주어야 빨라지므로, 이 비교는
    # float8에 불리한 쪽입니다(페이지에 적었습니다).
    problem = float8_problem(bench_device)
    if problem:
        pytest.skip(problem)
    size = SIZES[size_key]
    cfg = config(size)
    stage = dataclasses.replace(stages(size)[-1][2], compile=False, float8=float8)
    job = cap.make_job(stage, cfg, bench_device, size["batch_size"])
    try:
        metrics = warm_up(job, size, bench_device)
        timed_training(
            measure,
            job,
            size,
            key="float8" if float8 else "bf16-final",
            group="float8",
            variant="float8" if float8 else "bf16-final",
            role="recommended" if float8 else "baseline",
            params=model_params(cfg, job.tokens_per_step // cfg.seq_len),
            metrics=metrics,
        )
    finally:
        job.close()


# --- 곁가지: DDP -----------------------------------------------------------------------------


@pytest.mark.measures("ddp")
def test_ddp(bench_device):
    if bench_device.type != "cuda":
        pytest.skip(
            "해당 없음: 장치가 하나(CPU)뿐입니다. DDP는 모델을 장치마다 복제하고 배치를 나눠 "
            "변화도를 평균하는 방법이라 나눌 장치가 둘 이상 있어야 합니다. 2코어 CPU를 프로세스 "
            "둘로 나누면 같은 코어를 나눠 쓸 뿐입니다(팁 5)."
        )
    pytest.skip(
        "해당 없음: 이 벤치마크는 GPU 하나로 잽니다. DDP는 GPU가 둘 이상일 때 GPU 수만큼 처리량을 "
        "늘리는 방법이라, GPU 하나의 폭포 차트에는 들어갈 단계가 없습니다(팁 5)."
    )
