"""snippets/capstone_gpt.py의 테스트: 단계마다 같은 함수를 계산하는지, 학습이 되는지, 연산 수."""

import copy
import dataclasses

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from snippets import capstone_gpt as cap

CPU = torch.device("cpu")
# 아주 작은 모델: 어휘 257(덧붙이면 320), 길이 16, 2층, 헤드 2개, 폭 32.
TINY = cap.GPTConfig(vocab_size=257, seq_len=16, n_layer=2, n_head=2, n_embd=32)
STAGES = cap.cumulative_stages(num_workers=1)
BASELINE = STAGES[0][2]


def tiny_job(stage, cfg=TINY, batch_size=4, seed=0, backend="eager"):
    return cap.make_job(stage, cfg, CPU, batch_size, seed=seed, compile_backend=backend)


def copy_weights(source, target):
    """기준 모델의 가중치를 단계의 모델로 옮깁니다. 덧붙인 어휘 자리는 0으로 둡니다."""
    with torch.no_grad():
        for p, q in zip(source.parameters(), target.parameters(), strict=True):
            q.zero_()
            q[tuple(slice(0, size) for size in p.shape)].copy_(p)


def loss_and_grads(model, stage, x, y):
    """기준과 같은 배치로 순전파, 역전파를 한 번 하고 (logits, 손실, 기준 모양의 변화도)."""
    model.zero_grad(set_to_none=True)
    with cap.matmul_precision(stage), cap.autocast(CPU, stage):
        logits, loss = model(x, y)
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    return logits.float(), loss.detach(), grads


def batch(cfg=TINY, batch_size=4, seed=0):
    dataset = cap.MarkovTokens(cfg.vocab_size, cfg.seq_len, seed=seed)
    x, y = zip(*(dataset[i] for i in range(batch_size)), strict=True)
    return torch.stack(x), torch.stack(y)


# --- 연산 수 공식 ------------------------------------------------------------------------------


@pytest.mark.parametrize("sdpa", [False, True])
def test_flop_formula_matches_flop_counter_for_gpt2_small(sdpa):
    # GPT-2 124M(어휘 50304), 길이 1024. meta 장치에서는 메모리도 계산도 없이 연산 수만 셉니다.
    cfg = cap.GPTConfig(vocab_size=50304)
    with torch.device("meta"):
        model = cap.GPT(cfg, cap.Stage(sdpa=sdpa))
    idx = torch.zeros(1, cfg.seq_len, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        _, loss = model(idx, idx)
        loss.backward()
    formula = cap.flops_per_token(cfg) * cfg.seq_len
    assert counter.get_total_flops() == pytest.approx(formula, rel=0.02)
    # 공식의 N(위치 임베딩을 뺀 가중치 수)이 모델의 실제 가중치 수와 같아야 합니다.
    non_position = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    assert non_position == 123_689_472
    assert cap.flops_per_token(cfg) == pytest.approx(0.855e9, rel=1e-3)


def test_mfu_uses_the_published_peak_and_never_guesses(monkeypatch):
    cfg = cap.GPTConfig()
    assert cap.peak_bf16_tflops(CPU) is None
    names = {
        "NVIDIA H100 80GB HBM3": 989.0,
        "NVIDIA H200": 989.0,
        "NVIDIA H200 NVL": 836.0,
        "NVIDIA H100 PCIe": None,  # 표에 없는 GPU: MFU를 내지 않습니다.
        "NVIDIA A100-SXM4-80GB": None,
    }
    for name, peak in names.items():
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda _d=None, n=name: n)
        assert cap.peak_bf16_tflops(torch.device("cuda")) == peak
    tokens_per_s = 989e12 / cap.flops_per_token(cfg) / 2
    assert cap.mfu(tokens_per_s, cfg, 989.0) == pytest.approx(0.5)


# --- 단계 ------------------------------------------------------------------------------------


def test_each_stage_changes_only_a_little_and_keeps_the_previous_ones():
    fields = [f.name for f in dataclasses.fields(cap.Stage)]
    assert [key for key, _, _ in STAGES][0] == "baseline" and BASELINE == cap.Stage()
    for (_, _, before), (key, _, after) in zip(STAGES, STAGES[1:], strict=False):
        changed = [f for f in fields if getattr(before, f) != getattr(after, f)]
        assert 1 <= len(changed) <= 2, key
    final = STAGES[-1][2]
    assert final.compile and final.bf16 and final.sdpa and final.fused_adamw
    assert not final.checkpointing and not final.float8  # 곁가지는 누적하지 않습니다.


@pytest.mark.parametrize(
    ("key", "stage"), [(k, s) for k, _, s in STAGES], ids=[k for k, _, _ in STAGES]
)
def test_every_stage_trains_and_the_loss_falls(key, stage):
    job = tiny_job(stage)
    try:
        first = cap.train_steps(job, 1)
        last = cap.train_steps(job, 12)
    finally:
        job.close()
    assert isinstance(first, float) and isinstance(last, float)
    assert last < first - 0.1, key


def _same_function_cases():
    cases = [(k, s) for k, _, s in STAGES[1:]]
    cases.append(("checkpointing", dataclasses.replace(STAGES[-2][2], checkpointing=True)))
    return cases


@pytest.mark.parametrize(
    ("cfg", "seed"),
    [(TINY, 0), (cap.GPTConfig(vocab_size=100, seq_len=24, n_layer=1, n_head=4, n_embd=48), 1)],
    ids=["tiny", "other-shape"],
)
@pytest.mark.parametrize(
    ("key", "stage"), _same_function_cases(), ids=[k for k, _ in _same_function_cases()]
)
def test_every_stage_computes_the_same_function_as_the_baseline(key, stage, cfg, seed):
    torch.manual_seed(seed)
    base = cap.GPT(cfg, BASELINE)
    model = cap.GPT(cfg, stage)
    copy_weights(base, model)
    model = cap.maybe_compile(model, stage, backend="aot_eager")
    x, y = batch(cfg, seed=seed)
    logits0, loss0, grads0 = loss_and_grads(base, BASELINE, x, y)
    logits, loss, grads = loss_and_grads(model, stage, x, y)
    # fp32 단계는 거의 같고, bf16 단계는 bf16의 정밀도(기계 엡실론 2**-8) 안에서 같아야 합니다.
    tol = 2e-2 if stage.bf16 else 1e-5
    assert logits.shape == logits0.shape
    torch.testing.assert_close(loss, loss0, rtol=tol, atol=tol)
    torch.testing.assert_close(logits, logits0, rtol=tol, atol=4 * tol)
    for g0, g in zip(grads0, grads, strict=True):
        g = g[tuple(slice(0, size) for size in g0.shape)]
        assert (g - g0).norm() <= 8 * tol * g0.norm() + 1e-6
    if stage.pad_vocab:
        # 덧붙인 어휘 자리는 손실에 쓰이지 않으므로 변화도가 0입니다.
        assert model.wte.weight.shape[0] % 64 == 0
        assert grads[0][cfg.vocab_size :].abs().max() == 0


def test_real_torch_compile_matches_eager_at_a_tiny_size():
    # 다른 테스트는 빠르게 하려고 그래프를 잡기만 합니다(eager, aot_eager). 여기서는 Inductor가
    # 실제로 코드를 만들어 컴파일한 모델이 같은 손실과 같은 학습을 하는지 한 번 확인합니다.
    final = STAGES[-1][2]
    eager = dataclasses.replace(final, compile=False, num_workers=0)
    compiled = dataclasses.replace(final, num_workers=0)
    cfg = cap.GPTConfig(vocab_size=64, seq_len=8, n_layer=1, n_head=2, n_embd=16)
    jobs = [tiny_job(s, cfg, batch_size=2, backend="inductor") for s in (eager, compiled)]
    losses = [cap.train_steps(job, 3) for job in jobs]
    assert losses[1] == pytest.approx(losses[0], rel=2e-2)


def test_slow_and_fast_entry_points_train_the_same_model():
    slow = cap.train_baseline(TINY, CPU, batch_size=4, steps=6)
    fast = cap.train_with_every_tip(TINY, CPU, 4, steps=6, num_workers=1, compile_backend="eager")
    # 빠른 쪽은 배치가 두 배라 손실이 같지는 않지만, 둘 다 처음(ln 257 ≈ 5.55)보다 낮아야 합니다.
    assert slow < 5.5 and fast < 5.5


def test_fused_adamw_makes_the_same_update_as_the_default():
    torch.manual_seed(0)
    base = cap.GPT(TINY, BASELINE)
    x, y = batch()
    updates = []
    for fused in (False, True):
        model = copy.deepcopy(base)
        optimizer = cap.make_optimizer(model, cap.Stage(fused_adamw=fused))
        assert bool(optimizer.defaults["fused"]) == fused
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        updates.append(
            torch.cat(
                [
                    (p - q).flatten()
                    for p, q in zip(model.parameters(), base.parameters(), strict=True)
                ]
            )
        )
    torch.testing.assert_close(updates[1], updates[0], rtol=1e-5, atol=1e-7)


def test_workers_and_reading_once_change_nothing_but_speed():
    # 워커, 고정된 메모리, 끝에 한 번 읽기, 장치에서 바로 만들기: 비트 단위로 같은 학습입니다.
    losses = []
    for _, _, stage in STAGES[:4]:
        job = tiny_job(stage)
        try:
            losses.append(cap.train_steps(job, 3))
        finally:
            job.close()
    assert len(set(losses)) == 1


def test_markov_data_is_deterministic_and_structured():
    dataset = cap.MarkovTokens(vocab_size=500, seq_len=64, seed=3)
    x, y = dataset[7]
    x2, y2 = dataset[7]
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert torch.equal(x[1:], y[:-1])  # y는 x를 한 칸 민 것입니다.
    assert not torch.equal(dataset[8][0], x)
    # 구조: 토큰마다 다음 토큰의 후보는 8개뿐입니다.
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        assert b in dataset.successors[a]


def test_checkpointing_saves_activation_memory():
    stage = dataclasses.replace(STAGES[-2][2], num_workers=0)
    sizes = []
    for checkpointing in (False, True):
        job = tiny_job(dataclasses.replace(stage, checkpointing=checkpointing))
        sizes.append(cap.saved_activation_mib(job))
    assert 0 < sizes[1] < sizes[0]


def test_profile_shows_the_operators():
    job = tiny_job(BASELINE)
    table = cap.profile_steps(job, steps=1)
    assert "aten::" in table and "Self CPU" in table


def test_matmul_ceiling_is_positive():
    assert cap.matmul_tflops(CPU, n=64, repeat=2) > 0


# --- GPU가 필요한 길과 main -----------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_float8_without_gpu_stops_with_korean_message():
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        cap.to_float8(cap.GPT(TINY, BASELINE))
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        tiny_job(cap.Stage(float8=True))


def test_main_runs_on_cpu(capsys):
    cap.main("cpu", steps=1)
    out = capsys.readouterr().out
    assert out.count("배), 손실") == len(STAGES)
    assert "MFU 대신 토큰/초" in out
