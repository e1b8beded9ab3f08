"""전부 합치면 벤치마크: GPT 학습 하나에 팁을 하나씩 더하며 단계마다 초당 토큰 수를 잽니다.

- 폭포(waterfall): 단계 0–10을 한 묶음으로 섞인 라운드에서 잽니다. 단계마다 새 모델을 같은
  seed로 만들고, 시간 밖에서 `loss_steps`번 학습해(컴파일, 워커 시작 포함) 끝의 손실을 남깁니다.
  바로 앞 단계와의 짝 비율도 냅니다("앞 단계 대비").
- 빼 보기(leave-one-out): 컴파일을 뺀 마지막 단계(모든 팁)에서 팁을 하나씩 빼고 잽니다.
  컴파일은 조합마다 새로 컴파일해야 해서 폭포의 마지막 단계로만 잽니다.
- 천장: 같은 실행에서 잰 큰 행렬 곱(GPU와 bf16 하드웨어가 있는 CPU는 bf16, 아니면 fp32).
  GPU에서는 공개된 밀집 bf16 최고 성능(guide/peaks.toml) 대비 MFU도 표에 나옵니다.
- 번외: 블록마다 활성화 체크포인팅(시간을 내주고 메모리를 얻습니다).
토큰당 연산 수는 스니펫의 6N + 12·L·H·Q·T 공식입니다(tests가 FlopCounterMode와 맞춰 봅니다).
"""

import dataclasses
import gc

import pytest
import torch
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

from measuring import ceilings
from snippets import beyond_checkpointing as ck
from snippets import capstone_gpt as cap

PAGE = "capstone"

# GPU: GPT-2 small(124M) 그대로, 배치 8×1024(단계 9부터 16).
# CPU: 작은 GPT(2층, 폭 128, 길이 64, 어휘 2049 = 2048 + 특수 토큰 1개: 50257처럼 어중간한 크기).
# bf16 명령이 없는 CPU는 bf16을 흉내 내어 fp32보다 수십 배 느립니다. 그런 2코어 CPU에서도 bf16
# 단계의 스텝이 1초 안쪽이 되는 크기입니다(스텝 하나가 약 1 GFLOP).
# quick: 평소 pytest가 모든 단계를 몇 초 안에 돌리는 크기.
SIZES = {
    "cuda": {
        "model": {"vocab_size": 50257, "seq_len": 1024, "n_layer": 12, "n_head": 12, "n_embd": 768},
        "batch_size": 8, "workers": 4, "loss_steps": 8, "steps_per_round": 2,
        "compile_backend": "inductor", "profile_steps": 2, "matmul_n": 8192,
    },
    "cpu": {
        "model": {"vocab_size": 2049, "seq_len": 64, "n_layer": 2, "n_head": 4, "n_embd": 128},
        "batch_size": 4, "workers": 1, "loss_steps": 4, "steps_per_round": 1,
        "compile_backend": "inductor", "profile_steps": 1, "matmul_n": 2048,
    },
    "quick": {
        "model": {"vocab_size": 257, "seq_len": 16, "n_layer": 1, "n_head": 2, "n_embd": 32},
        "batch_size": 2, "workers": 0, "loss_steps": 2, "steps_per_round": 1,
        "compile_backend": "eager", "profile_steps": 0, "matmul_n": 64,
    },
}  # fmt: skip
BATCH_MULTIPLIER = 2


def stages(size):
    return cap.cumulative_stages(size["workers"], BATCH_MULTIPLIER)


def model_params(cfg, stage, batch_size):
    return {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
            "seq_len": cfg.seq_len, "vocab_size": cfg.vocab_size,
            "batch_size": batch_size * stage.batch_multiplier,
            "num_workers": stage.num_workers}  # fmt: skip


def ceiling_dtype(device):
    return torch.bfloat16 if ceilings.bf16_matmul_in_hardware(device) else torch.float32


def warm_job(stage, cfg, device, size):
    """시간 밖의 준비: 컴파일, 워커 시작, 첫 할당. 같은 스텝 수를 학습한 끝의 손실도 돌려줍니다."""
    job = cap.make_job(
        stage, cfg, device, size["batch_size"], compile_backend=size["compile_backend"]
    )
    loss = cap.train_steps(job, size["loss_steps"])
    return job, loss


def add_job(group, key, variant, job, loss, size, role, ceiling="matmul", metrics=None):
    steps = size["steps_per_round"]
    tokens = job.tokens_per_step * steps
    group.add(variant, cap.train_steps, job, steps, key=key, role=role, ceiling=ceiling,
              params=model_params(job.cfg, job.stage, size["batch_size"]) | {"steps": steps},
              per_call={"tokens": tokens, "flops": tokens * cap.flops_per_token(job.cfg)},
              metrics={"loss": loss, **(metrics or {})})  # fmt: skip


def close(jobs):
    for job in jobs:
        job.close()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@pytest.mark.measures("ceiling")
def test_ceiling(compare, bench_device, size_key):
    n, dtype = SIZES[size_key]["matmul_n"], ceiling_dtype(bench_device)
    group = compare("ceiling")
    variant = f"matmul-{str(dtype).removeprefix('torch.')}"
    ceilings.add_matmul(group, variant, n, dtype, bench_device, key="matmul")
    assert group.run()["matmul"].shape == (n, n)


@pytest.mark.measures("waterfall")
def test_waterfall(compare, bench_device, size_key, tmp_path):
    size = SIZES[size_key]
    cfg = cap.GPTConfig(**size["model"])
    group = compare("waterfall")
    jobs, profiles = [], {}
    listed = stages(size)
    # 빈 Inductor 캐시 폴더에서 컴파일합니다: 앞선 실행의 캐시를 읽으면 첫 컴파일이 아닙니다.
    with temporary_cache_dir(str(tmp_path)):
        try:
            for index, (key, _, stage) in enumerate(listed):
                job, loss = warm_job(stage, cfg, bench_device, size)
                jobs.append(job)
                role = {0: "baseline", len(listed) - 1: "recommended"}.get(index, "other")
                add_job(group, f"stage{index:02d}-{key}", key, job, loss, size, role)
                if size["profile_steps"] and index in (0, len(listed) - 1):
                    profiles[index] = cap.profile_steps(job, size["profile_steps"])
            losses = group.run()
        finally:
            close(jobs)
    assert all(loss == loss for loss in losses.values())  # NaN이면 학습이 망가진 것입니다.
    if profiles:
        final = f"stage{len(listed) - 1:02d}-{listed[-1][0]}"
        text = "\n\n".join(f"[{'기준 단계(0)' if i == 0 else '마지막 단계'}]\n{profiles[i].strip()}"
                           for i in sorted(profiles))  # fmt: skip
        group.attach(final, report_excerpt=text)


def without(stage, before, after):
    """after 단계에서 before → after로 바뀐 플래그만 되돌린 Stage(그 팁 하나를 뺀 것)."""
    changed = {f.name: getattr(before, f.name) for f in dataclasses.fields(stage)
               if getattr(before, f.name) != getattr(after, f.name)}  # fmt: skip
    return dataclasses.replace(stage, **changed)


@pytest.mark.measures("leave-one-out")
def test_leave_one_out(compare, bench_device, size_key):
    size = SIZES[size_key]
    cfg = cap.GPTConfig(**size["model"])
    listed = stages(size)
    full = listed[-2][2]  # 컴파일을 뺀 마지막 단계: 나머지 팁을 모두 씁니다.
    group = compare("leave-one-out")
    jobs = []
    try:
        job, loss = warm_job(full, cfg, bench_device, size)
        jobs.append(job)
        add_job(group, "all-tips", "all-tips", job, loss, size, "baseline")
        for (_, _, before), (key, _, after) in zip(listed[:-2], listed[1:-1], strict=True):
            job, loss = warm_job(without(full, before, after), cfg, bench_device, size)
            jobs.append(job)
            add_job(group, f"without-{key}", f"without-{key}", job, loss, size, "other")
        losses = group.run()
    finally:
        close(jobs)
    assert all(loss == loss for loss in losses.values())


def saved_activation_mib(job):
    """순전파 한 번이 역전파를 위해 저장하는 활성값(MiB). 셈은 활성화 체크포인팅 페이지의 함수로."""
    x, y = cap.to_device(next(job.batches), job.stage, job.device)

    def forward():
        with cap.matmul_precision(job.stage), cap.autocast(job.device, job.stage):
            return job.model(x, y)

    return ck.saved_activation_bytes(job.model, forward) / 2**20


@pytest.mark.measures("checkpointing")
def test_checkpointing(compare, bench_device, size_key):
    # 컴파일을 뺀 마지막 단계입니다. 저장한 활성값은 eager 실행에서만 셀 수 있습니다.
    size = SIZES[size_key]
    cfg = cap.GPTConfig(**size["model"])
    final = stages(size)[-2][2]
    group = compare("checkpointing")
    jobs = []
    try:
        for checkpointing, variant, role in ((False, "no-checkpointing", "baseline"),
                                             (True, "checkpointing", "other")):  # fmt: skip
            stage = dataclasses.replace(final, checkpointing=checkpointing)
            job, loss = warm_job(stage, cfg, bench_device, size)
            jobs.append(job)
            saved = {"saved_activation_mib": saved_activation_mib(job)}
            add_job(group, variant, variant, job, loss, size, role, ceiling=None, metrics=saved)
        group.run()
    finally:
        close(jobs)
