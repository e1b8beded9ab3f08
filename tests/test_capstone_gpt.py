"""snippets/capstone_gpt.py의 테스트: 단계마다 같은 함수를 계산하는지, 학습이 되는지, 연산 수."""

import copy
import dataclasses
import math
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.optim import adam
from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.bench_capstone_gpt import saved_activation_mib
from guide import registry
from snippets import capstone_gpt as cap
from tests.site_build import ROOT

CPU = torch.device("cpu")
PAGE = ROOT / "docs" / "capstone" / "01-all-together.md"
# 아주 작은 모델: 어휘 257(덧붙이면 320), 길이 16, 2층, 헤드 2개, 폭 32.
TINY = cap.GPTConfig(vocab_size=257, seq_len=16, n_layer=2, n_head=2, n_embd=32)
STAGES = cap.cumulative_stages(num_workers=1)
BASELINE = STAGES[0][2]
FINAL = STAGES[-1][2]


def tiny_job(stage, cfg=TINY, batch_size=4, seed=0, backend="eager"):
    return cap.make_job(stage, cfg, CPU, batch_size, seed=seed, compile_backend=backend)


def copy_weights(source, target):
    """기준 모델의 가중치를 단계의 모델로 옮깁니다. 덧붙인 어휘 자리는 0으로 둡니다."""
    with torch.no_grad():
        for p, q in zip(source.parameters(), target.parameters(), strict=True):
            q.zero_()
            q[tuple(slice(0, size) for size in p.shape)].copy_(p)


def mask_padded_vocab(model, vocab_size):
    """덧붙인 어휘 자리의 logits를 -inf로 가립니다. 정답으로 나오지 않는 그 자리의 확률은 학습이
    곧 0으로 보내므로, 이 가림은 학습이 다다르는 곳을 바로 놓는 것입니다. 테스트에만 씁니다."""

    def mask(_module, _inputs, logits):
        padded = torch.arange(vocab_size, logits.size(-1), device=logits.device)
        return logits.index_fill(-1, padded, float("-inf"))

    return model.lm_head.register_forward_hook(mask)


def loss_and_grads(model, stage, x, y):
    """기준과 같은 배치로 순전파, 역전파를 한 번 하고 (logits, 손실, 변화도)를 돌려줍니다."""
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


def autograd_nodes(tensor):
    """tensor를 만든 autograd 그래프의 노드 이름들(역전파에서 실행될 연산)."""
    seen, stack, names = set(), [tensor.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return names


# --- 연산 수 공식 ------------------------------------------------------------------------------


@pytest.mark.parametrize("sdpa", [False, True])
def test_flop_formula_matches_flop_counter_for_gpt2_small(sdpa):
    # GPT-2 124M, 길이 1024. meta 장치에서는 메모리도 계산도 없이 연산 수만 셉니다.
    cfg = cap.GPTConfig()
    with torch.device("meta"):
        model = cap.GPT(cfg, cap.Stage(sdpa=sdpa))
    idx = torch.zeros(1, cfg.seq_len, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        _, loss = model(idx, idx)
        loss.backward()
    formula = cap.flops_per_token(cfg) * cfg.seq_len
    assert counter.get_total_flops() == pytest.approx(formula, rel=0.02)


def test_page_states_the_formula_values_for_the_original_vocabulary():
    # 공식의 N은 모델이 실제로 가진 가중치 수(위치 임베딩 제외)이고, 어휘를 덧붙인 단계도 원래
    # 어휘로 셉니다. 페이지가 적은 N과 토큰당 연산 수가 그 값이어야 합니다(CP16).
    cfg = cap.GPTConfig()
    with torch.device("meta"):
        model = cap.GPT(cfg, cap.Stage())
        padded = cap.GPT(cfg, cap.Stage(pad_vocab=True))
    n = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    per_token = cap.flops_per_token(cfg)
    assert per_token == 6 * n + 12 * cfg.n_layer * cfg.n_embd * cfg.seq_len
    assert padded.wte.weight.shape[0] == 50304 and cap.flops_per_token(padded.cfg) == per_token
    page = PAGE.read_text(encoding="utf-8")
    assert f"N은 약 {n / 1e6:.2f}M" in page
    assert f"토큰당 약 {per_token / 1e9:.3f} GFLOP" in page
    model_line = f"{cfg.n_layer}층, 헤드 {cfg.n_head}개, 폭 {cfg.n_embd}, 문맥 길이 {cfg.seq_len}"
    assert f"{model_line}, 어휘 {cfg.vocab_size}" in page


def test_mfu_divides_model_flops_by_the_peak_and_the_peak_table_lives_once():
    cfg = cap.GPTConfig()
    tokens_per_s = 989e12 / cap.flops_per_token(cfg) / 2
    assert cap.mfu(tokens_per_s, cfg, 989.0) == pytest.approx(0.5)
    # 최고 성능 표는 guide/peaks.toml 하나에만 있습니다(출처와 함께). 스니펫이 다시 적지 않습니다.
    source = Path(cap.__file__).read_text(encoding="utf-8")
    assert "989" not in source and "TFLOPS = {" not in source


# --- 단계 ------------------------------------------------------------------------------------


def test_each_stage_changes_only_a_little_and_keeps_the_previous_ones():
    fields = [f.name for f in dataclasses.fields(cap.Stage)]
    assert [key for key, _, _ in STAGES][0] == "baseline" and BASELINE == cap.Stage()
    for (_, _, before), (key, _, after) in zip(STAGES, STAGES[1:], strict=False):
        changed = [f for f in fields if getattr(before, f) != getattr(after, f)]
        assert 1 <= len(changed) <= 2, key
    assert not FINAL.checkpointing  # 번외 실험은 누적하지 않습니다.


def test_stages_match_the_registry_waterfall_in_order():
    # 레지스트리의 변형 이름 "0. 기준…" … "10. + torch.compile"이 코드의 단계 순서와 같습니다.
    variants = registry.by_id("capstone").variants
    keys = [key for key, _, _ in STAGES]
    numbered = {key: label for key, label in variants.items() if re.match(r"\d+\. ", label)}
    assert list(numbered) == keys
    assert [int(label.split(".")[0]) for label in numbered.values()] == list(range(len(keys)))


def test_entry_points_train_with_no_tip_and_with_every_tip(monkeypatch):
    used = []
    make_job = cap.make_job

    def spy(stage, *args, **kwargs):
        used.append(stage)
        return make_job(stage, *args, **kwargs)

    monkeypatch.setattr(cap, "make_job", spy)
    slow = cap.train_baseline(TINY, CPU, batch_size=4, steps=3)
    fast = cap.train_with_every_tip(TINY, CPU, 4, steps=3, num_workers=1, compile_backend="eager")
    slow_stage, fast_stage = used
    assert slow_stage == cap.Stage()
    # 빠른 쪽은 단계 목록의 마지막 단계이고, 어느 단계가 바꾸는 플래그는 모두 켜져 있습니다.
    assert fast_stage == FINAL
    for field in dataclasses.fields(cap.Stage):
        if any(getattr(s, field.name) != field.default for _, _, s in STAGES):
            assert getattr(fast_stage, field.name) != field.default, field.name
    # 두 입구는 그 단계로 make_job과 train_steps를 부른 것과 같은 학습입니다.
    for stage, loss in ((slow_stage, slow), (fast_stage, fast)):
        job = make_job(stage, TINY, CPU, 4, compile_backend="eager")
        try:
            assert cap.train_steps(job, 3) == loss
        finally:
            job.close()


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
    # 처음 손실은 고르게 찍는 수준(덧붙인 어휘까지 포함한 어휘 크기의 로그)입니다.
    assert first == pytest.approx(math.log(cap.padded_vocab(TINY.vocab_size, stage)), abs=0.1)
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
    if stage.pad_vocab:
        mask_padded_vocab(model, cfg.vocab_size)
    model = cap.maybe_compile(model, stage, backend="aot_eager")
    x, y = batch(cfg, seed=seed)
    logits0, loss0, grads0 = loss_and_grads(base, BASELINE, x, y)
    logits, loss, grads = loss_and_grads(model, stage, x, y)
    # fp32 단계는 거의 같고, bf16 단계는 bf16의 정밀도(기계 엡실론 2**-8) 안에서 같아야 합니다.
    tol = 2e-2 if stage.bf16 else 1e-5
    torch.testing.assert_close(loss, loss0, rtol=tol, atol=tol)
    torch.testing.assert_close(logits[..., : cfg.vocab_size], logits0, rtol=tol, atol=4 * tol)
    for g0, g in zip(grads0, grads, strict=True):
        g = g[tuple(slice(0, size) for size in g0.shape)]
        assert (g - g0).norm() <= 8 * tol * g0.norm() + 1e-6
    if stage.pad_vocab:
        # 덧붙인 어휘 자리는 정답으로 나오지 않으므로 그 자리의 가중치에는 변화도가 없습니다.
        assert model.wte.weight.shape[0] % 64 == 0
        assert grads[0][cfg.vocab_size :].abs().max() == 0


def test_padded_logits_go_into_the_loss_without_a_slice():
    # CP6: 단계 7부터 손실은 덧붙인 자리까지 포함한 logits로 계산합니다. 잘라 내면 역전파에
    # SliceBackward0(전체 크기의 0 채우기와 복사)가 생깁니다. 덧붙인 자리는 정답이 아니므로
    # 정규화 항에만 들어갑니다: 그 자리의 logit이 0이면 손실은 0을 덧붙인 logits의 교차 엔트로피.
    torch.manual_seed(0)
    base = cap.GPT(TINY, BASELINE)
    padded = cap.GPT(TINY, cap.Stage(pad_vocab=True))
    copy_weights(base, padded)  # 덧붙인 자리의 가중치는 0 → 그 자리의 logit은 0
    x, y = batch()
    assert int(y.max()) < TINY.vocab_size  # 덧붙인 자리는 정답으로 나오지 않습니다
    logits0, loss0 = base(x, y)
    logits, loss = padded(x, y)
    extra = logits.size(-1) - TINY.vocab_size
    assert extra > 0 and torch.equal(
        logits[..., TINY.vocab_size :], torch.zeros_like(logits[..., :extra])
    )
    torch.testing.assert_close(logits[..., : TINY.vocab_size], logits0)
    expected = F.cross_entropy(F.pad(logits0, (0, extra)).flatten(0, 1), y.flatten())
    torch.testing.assert_close(loss, expected)
    assert loss > loss0  # 덧붙인 자리가 확률을 조금 가져갑니다(학습이 곧 0으로 보냅니다)
    assert "SliceBackward0" not in autograd_nodes(loss)
    sliced = F.cross_entropy(logits[..., : TINY.vocab_size].flatten(0, 1), y.flatten())
    assert "SliceBackward0" in autograd_nodes(sliced)  # 이 검사가 자르기를 알아봅니다


def test_real_torch_compile_matches_eager_at_a_tiny_size():
    # 다른 테스트는 빠르게 하려고 그래프를 잡기만 합니다(eager, aot_eager). 여기서는 Inductor가
    # 실제로 코드를 만들어 컴파일한 모델이 같은 손실과 같은 학습을 하는지 한 번 확인합니다.
    # README대로 g++가 없으면 건너뛰지 않고 실패합니다(CPU의 Inductor는 C++ 컴파일러가 필요합니다).
    if shutil.which("g++") is None:
        pytest.fail("g++가 없습니다: README의 설치 안내대로 g++와 python3-dev를 설치하세요")
    eager = dataclasses.replace(FINAL, compile=False, num_workers=0)
    compiled = dataclasses.replace(FINAL, num_workers=0)
    cfg = cap.GPTConfig(vocab_size=64, seq_len=8, n_layer=1, n_head=2, n_embd=16)
    jobs = [tiny_job(s, cfg, batch_size=2, backend="inductor") for s in (eager, compiled)]
    losses = [cap.train_steps(job, 3) for job in jobs]
    assert losses[1] == pytest.approx(losses[0], rel=2e-2)


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
        deltas = [
            (p - q).flatten() for p, q in zip(model.parameters(), base.parameters(), strict=True)
        ]
        updates.append(torch.cat(deltas))
    torch.testing.assert_close(updates[1], updates[0], rtol=1e-5, atol=1e-7)


def test_default_adamw_is_a_for_loop_on_cpu_and_foreach_on_cuda(monkeypatch):
    # CP4: 단계 8 앞의 기본 AdamW는 CPU에서 가중치마다 도는 for-loop이고, CUDA에서는 foreach입니다.
    called = []
    for name in ("_single_tensor_adam", "_multi_tensor_adam", "_fused_adam"):
        monkeypatch.setattr(adam, name, lambda *a, _n=name, **k: called.append(_n))
    model = cap.GPT(TINY, BASELINE)
    for stage in (BASELINE, cap.Stage(fused_adamw=True)):
        optimizer = cap.make_optimizer(model, stage)
        model(*batch())[1].backward()
        optimizer.step()
    assert called == ["_single_tensor_adam", "_fused_adam"]
    # PyTorch가 foreach를 기본으로 고르는 장치 목록: CUDA는 있고 CPU는 없습니다.
    assert "cuda" in _get_foreach_kernels_supported_devices()
    assert "cpu" not in _get_foreach_kernels_supported_devices()


def test_tf32_stage_changes_only_cuda_matmuls_and_leaves_the_legacy_getter_working():
    # 단계 4는 CUDA 행렬 곱의 설정만 바꾸고, 끝나면 되돌려 옛 getter(Lightning이 읽음)가 다시
    # 동작합니다. CPU(oneDNN)의 행렬 곱 설정은 건드리지 않습니다.
    before = (
        torch.backends.cuda.matmul.fp32_precision,
        torch.backends.mkldnn.matmul.fp32_precision,
    )
    with cap.matmul_precision(cap.Stage(tf32=True)):
        assert torch.backends.cuda.matmul.fp32_precision == "tf32"
        assert torch.backends.mkldnn.matmul.fp32_precision == before[1]
    with cap.matmul_precision(BASELINE):
        assert torch.backends.cuda.matmul.fp32_precision == "ieee"
    after = (torch.backends.cuda.matmul.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision)
    assert after == before
    torch.get_float32_matmul_precision()  # 옛 API와 새 API를 섞었다는 RuntimeError가 없습니다


def test_workers_and_reading_once_change_nothing_but_speed():
    # 워커, 고정 메모리, 끝에 한 번 읽기, 장치에서 만들기, (CPU의) TF32: 비트 단위로 같은 학습.
    losses = []
    for _, _, stage in STAGES[:5]:
        job = tiny_job(stage)
        try:
            losses.append(cap.train_steps(job, 3))
        finally:
            job.close()
    assert len(set(losses)) == 1


def test_cpu_loader_adds_workers_but_never_pins():
    # 단계 1의 고정 메모리는 CPU→GPU 복사를 위한 것이라 CPU에서는 켜지 않습니다(CP15).
    dataset = cap.MarkovTokens(TINY.vocab_size, TINY.seq_len)
    loader = cap.make_loader(dataset, STAGES[1][2], CPU, batch_size=2)
    assert STAGES[1][2].pin_memory and not loader.pin_memory
    assert loader.num_workers == 1 and loader.persistent_workers


def test_markov_data_is_deterministic_and_structured():
    dataset = cap.MarkovTokens(vocab_size=500, seq_len=64, seed=3)
    x, y = dataset[7]
    x2, y2 = dataset[7]
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert torch.equal(x[1:], y[:-1])  # y는 x를 한 칸 민 것입니다.
    assert not torch.equal(dataset[8][0], x)
    # 구조: 토큰마다 다음 토큰의 후보는 8개뿐이고, 모든 토큰은 원래 어휘 안에 있습니다.
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        assert b in dataset.successors[a]
    assert 0 <= int(x.min()) and int(y.max()) < 500


def test_checkpointing_saves_activation_memory():
    stage = dataclasses.replace(STAGES[-2][2], num_workers=0)
    sizes = []
    for checkpointing in (False, True):
        job = tiny_job(dataclasses.replace(stage, checkpointing=checkpointing))
        sizes.append(saved_activation_mib(job))
    assert 0 < sizes[1] < sizes[0]


def test_profiles_show_what_a_stage_removed():
    # 처음과 마지막 쪽 단계의 프로파일을 비교하면 사라진 연산이 보입니다: 손으로 쓴 어텐션의
    # masked_fill은 SDPA 단계에서 사라지고, 그 자리에 scaled_dot_product 연산이 나옵니다.
    tables = {}
    for name, stage in (("baseline", BASELINE), ("sdpa", STAGES[6][2])):
        job = tiny_job(dataclasses.replace(stage, num_workers=0))
        tables[name] = cap.profile_steps(job, steps=1, rows=200)
    assert "aten::masked_fill" in tables["baseline"] and "Self CPU" in tables["baseline"]
    assert "scaled_dot_product" not in tables["baseline"]
    assert "aten::masked_fill" not in tables["sdpa"]
    assert "scaled_dot_product" in tables["sdpa"]


def test_main_runs_on_cpu_and_the_cpu_no_op_stages_keep_the_loss(capsys):
    cap.main("cpu", steps=1)
    out = capsys.readouterr().out
    losses = re.findall(r"손실 (\d+\.\d+), [\d,]+ 토큰/초", out)
    assert len(losses) == len(STAGES)
    # CPU에서 단계 1–4는 계산을 바꾸지 않으므로 같은 손실이 찍힙니다.
    assert len(set(losses[:5])) == 1
    # MFU는 장치마다의 최고 성능으로 나눕니다: 시연은 TFLOP/s와 나누는 방법만 알려 줍니다.
    assert out.count("TFLOP/s") >= len(STAGES) and "MFU = 위의 TFLOP/s" in out
    # 저장소에만 있는 명령을 권하면 저장소가 필요하다고 말합니다(노트북을 내려받은 독자).
    assert "저장소를 받은 폴더에서" in out


def test_snippet_holds_only_what_a_reader_copies_in_450_lines():
    # 이슈 18: 독자가 복사해 가는 파일은 450줄 안쪽입니다(측정 도구와 명령줄은 다른 곳에).
    lines = (ROOT / "snippets" / "capstone_gpt.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 450


# --- 페이지 -----------------------------------------------------------------------------------


class ElementCounter(HTMLParser):
    """HTML 요소를 셉니다. 코드 블록(pre), 차트(svg), 표(table) 안의 요소는 따로 셉니다."""

    PARTS = ("pre", "svg", "table")
    VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self):
        super().__init__()
        self.count, self.inside, self.open = 0, Counter(), []

    def handle_starttag(self, tag, attrs):
        self.count += 1
        part = next((p for p in reversed(self.open) if p in self.PARTS), None)
        if part:
            self.inside[part] += 1
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.count += 1
        part = next((p for p in reversed(self.open) if p in self.PARTS), None)
        if part:
            self.inside[part] += 1

    def handle_endtag(self, tag):
        if tag in self.open:
            while self.open.pop() != tag:
                pass


def test_element_counter_sorts_code_charts_and_tables():
    counter = ElementCounter()
    counter.feed(
        "<p><pre><code><span>a</span><a></a></code></pre><svg><g><path/></g></svg><br></p>"
    )
    assert counter.count == 9 and counter.inside == {"pre": 3, "svg": 2}


def test_capstone_page_stays_light_on_a_phone(built_site):
    # 요소가 5천 개를 넘으면 휴대폰이 스타일과 배치 계산에 1초 넘게 멈춥니다(웹 감사). 모델과 학습
    # 루프는 한 번만 보여 주고, 파일 전체는 저장소와 노트북으로 연결합니다.
    counter = ElementCounter()
    counter.feed((built_site / "capstone" / "01-all-together.html").read_text(encoding="utf-8"))
    parts = ", ".join(f"{part} 안 {counter.inside[part]}" for part in ElementCounter.PARTS)
    assert counter.count <= 2000, f"요소 {counter.count}개: {parts}"
