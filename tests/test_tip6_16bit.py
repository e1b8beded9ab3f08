"""snippets/tip6_16bit.py의 테스트: 16비트 학습 스텝이 fp32 스텝과 같은 학습을 하는지 봅니다."""

import copy
import inspect
import json
import os
import re
import subprocess
import sys
import warnings

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from snippets import tip6_16bit as tip6
from tests.site_build import ROOT, page_quotes

# 여러 모양: (d_model, nhead, num_layers, batch_size, seq_len)
SHAPES = [(16, 2, 1, 4, 8), (32, 4, 2, 3, 5), (24, 3, 1, 6, 12)]
NUM_CLASSES = 7
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
ARTICLE_WARNINGS = [
    "`precision=16` is supported for historical reasons but its usage is discouraged. "
    "Please set your precision to 16-mixed instead!",
    "You passed `Trainer(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not "
    "supported on CPU. Using `precision='bf16-mixed'` instead.",
]


def build(shape, seed):
    d_model, nhead, num_layers, batch_size, seq_len = shape
    torch.manual_seed(seed)
    model = tip6.TinyTransformer(d_model, nhead, num_layers, NUM_CLASSES)
    x, y = tip6.make_batch("cpu", batch_size, seq_len, d_model, NUM_CLASSES, seed=seed)
    return model, x, y


def one_step(name, base, x, y, scaler=None):
    """base의 복사본으로 스텝 하나를 돌리고 (손실, 가중치 변화량 전체, 모델)을 돌려줍니다."""
    model = copy.deepcopy(base)
    # 분류 헤드(Linear)의 출력 dtype으로 autocast가 실제로 고른 형식을 기록합니다.
    model.head.register_forward_hook(lambda _m, _i, out: setattr(model, "seen_dtype", out.dtype))
    # SGD는 변화량이 변화도에 비례하므로 배율 실수(unscale 누락 등)가 그대로 드러납니다.
    # Adam은 첫 스텝에서 변화도의 크기를 지워 버려 이런 실수를 숨깁니다.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    kwargs = {}
    if name == "fp16":
        kwargs["scaler"] = scaler or torch.amp.GradScaler("cpu")
    loss = tip6.STEPS[name](model, optimizer, x, y, **kwargs)
    # 손실은 장치에 둔 채 돌려줍니다. 매 스텝 .item()으로 읽지 않습니다(팁 3).
    assert isinstance(loss, torch.Tensor) and not loss.requires_grad
    loss = loss.item()
    pairs = zip(model.parameters(), base.parameters(), strict=True)
    update = torch.cat([(p - p0).flatten() for p, p0 in pairs])
    return loss, update, model


def relative_error(actual, expected):
    return ((actual - expected).norm() / expected.norm()).item()


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_16bit_step_matches_fp32_within_format_precision(name, shape, seed):
    base, x, y = build(shape, seed)
    loss32, update32, _ = one_step("fp32", base, x, y)
    loss16, update16, model = one_step(name, base, x, y)
    # 허용 오차는 형식의 기계 엡실론(bf16 2**-8, fp16 2**-11)에 맞춥니다. fp16이 훨씬 엄격합니다.
    eps = torch.finfo(DTYPES[name]).eps
    assert isinstance(loss16, float)
    assert loss16 == pytest.approx(loss32, rel=eps)
    assert update32.norm() > 0
    assert relative_error(update16, update32) < 8 * eps
    # 정말 16비트로 계산했다면 fp32와 비트 단위로 같을 수는 없습니다.
    assert not torch.equal(update16, update32)
    assert model.seen_dtype == DTYPES[name]
    # 혼합 정밀도: 가중치(마스터 가중치)는 fp32로 남습니다.
    assert all(p.dtype == torch.float32 for p in model.parameters())


@pytest.mark.parametrize("shape", SHAPES)
def test_tf32_step_is_exactly_fp32_on_cpu(shape):
    base, x, y = build(shape, seed=3)
    loss32, update32, _ = one_step("fp32", base, x, y)
    loss_tf32, update_tf32, model = one_step("tf32", base, x, y)
    assert model.seen_dtype == torch.float32
    assert loss_tf32 == loss32
    torch.testing.assert_close(update_tf32, update32, rtol=0, atol=0)


def test_fp16_step_unscales_and_updates_the_scaler():
    base, x, y = build(SHAPES[0], seed=0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=1)
    loss32, update32, _ = one_step("fp32", base, x, y)
    loss16, update16, _ = one_step("fp16", base, x, y, scaler=scaler)
    # 배율을 곱하기 전의 손실과, 배율을 다시 나눈 변화도로 한 업데이트여야 합니다.
    assert loss16 == pytest.approx(loss32, rel=1e-3)
    assert relative_error(update16, update32) < 1e-2
    # growth_interval=1이므로 문제가 없던 스텝 뒤에 update()가 배율을 두 배로 키웁니다.
    assert scaler.get_scale() == 2.0**11


def test_fp16_step_skips_the_update_on_inf_gradients():
    base, x, y = build(SHAPES[1], seed=0)
    model = copy.deepcopy(base)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    # fp16 오버플로를 흉내 냅니다: 한 변화도를 inf로 바꿉니다.
    model.head.bias.register_hook(lambda grad: torch.full_like(grad, float("inf")))
    loss = tip6.train_step_fp16(model, optimizer, x, y, scaler).item()
    assert loss == pytest.approx(torch.nn.functional.cross_entropy(base(x), y).item(), rel=1e-3)
    # GradScaler가 이 스텝을 건너뛰었으므로 가중치가 그대로이고, 배율은 반으로 줄었습니다.
    for p, p0 in zip(model.parameters(), base.parameters(), strict=True):
        torch.testing.assert_close(p, p0, rtol=0, atol=0)
    assert scaler.get_scale() == 2.0**9


# 행렬 곱 정밀도를 정하는 전역 설정들. 테스트가 바꾼 값을 돌려 놓아 다른 테스트에 새지 않게 합니다.
# 맨 앞의 전체 설정을 먼저 돌려 놓습니다. 그것을 바꾸면 아래 설정들도 따라 바뀝니다.
MATMUL_FLAGS = (torch.backends, torch.backends.cuda.matmul, torch.backends.mkldnn.matmul)


@pytest.fixture(autouse=True)
def restore_matmul_precision():
    # 옛 API의 값은 새 플래그와 따로 저장되므로 둘 다 돌려 놓습니다(옛 값이 먼저). 모든 테스트에
    # 씁니다: TF32 스텝은 옛 API로만 되돌려 새 플래그가 "none" 대신 "ieee"로 남고, pytest-xdist가
    # 이 파일을 tests/test_beyond_tf32.py보다 먼저 돌리면 그 파일의 기본값 검사가 실패했습니다.
    legacy = torch.get_float32_matmul_precision()
    saved = [flags.fp32_precision for flags in MATMUL_FLAGS]
    yield
    torch.set_float32_matmul_precision(legacy)
    for flags, value in zip(MATMUL_FLAGS, saved, strict=True):
        flags.fp32_precision = value


@pytest.mark.parametrize("previous", ["highest", "high", "medium"])
def test_tf32_step_sets_tf32_only_during_the_step(previous, restore_matmul_precision):
    torch.set_float32_matmul_precision(previous)
    model, x, y = build(SHAPES[0], seed=0)
    seen = []
    model.register_forward_pre_hook(
        lambda *_: seen.append(
            (torch.backends.cuda.matmul.fp32_precision, torch.get_float32_matmul_precision())
        )
    )
    tip6.train_step_tf32(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    # 스텝 동안에는 CUDA 행렬 곱이 TF32이고, 옛 API로 읽어도 오류 없이 "high"입니다.
    assert seen == [("tf32", "high")]
    assert torch.get_float32_matmul_precision() == previous


def test_tf32_step_restores_the_setting_when_the_step_fails(restore_matmul_precision):
    torch.set_float32_matmul_precision("highest")
    model, x, y = build(SHAPES[0], seed=0)

    def fail(*_):
        raise RuntimeError("forward failed")

    model.register_forward_pre_hook(fail)
    with pytest.raises(RuntimeError, match="forward failed"):
        tip6.train_step_tf32(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cuda.matmul.fp32_precision == "ieee"


@pytest.fixture
def fake_ampere_gpu(monkeypatch):
    """CPU만 있는 컴퓨터를 A100(계산 능력 8.0)이 있는 컴퓨터처럼 보이게 합니다."""
    from lightning.fabric.accelerators.cuda import _check_cuda_matmul_precision

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100")
    # Lightning은 이 검사를 프로세스마다 한 번만 합니다(lru_cache). 매번 새로 하게 비웁니다.
    _check_cuda_matmul_precision.cache_clear()
    yield _check_cuda_matmul_precision
    _check_cuda_matmul_precision.cache_clear()


def test_recommended_tf32_line_keeps_lightnings_gpu_check_working(
    fake_ampere_gpu, restore_matmul_precision
):
    # 페이지가 권하는 한 줄: 새 플래그도 TF32가 되고, 옛 API로 읽어도 됩니다.
    torch.set_float32_matmul_precision("high")
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    assert torch.get_float32_matmul_precision() == "high"
    # Trainer가 Ampere 이후 GPU를 준비할 때(CUDAAccelerator.setup_device) 부르는 검사입니다.
    fake_ampere_gpu(torch.device("cuda", 0))


def test_new_tf32_flag_stops_lightnings_gpu_check(fake_ampere_gpu, restore_matmul_precision):
    # 새 API만으로 TF32를 켜면 같은 검사가 옛 API로 읽다가 멈춥니다(fit()이 시작하지 못합니다).
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs") as excinfo:
        fake_ampere_gpu(torch.device("cuda", 0))
    assert page_quotes("tips/06-16bit.md", str(excinfo.value))


def test_lightning_gpu_check_reads_nothing_on_older_gpus(monkeypatch, restore_matmul_precision):
    # 위 두 테스트가 정말 Ampere 분기를 지났는지 보입니다: 7.5(T4)에서는 설정을 읽지 않습니다.
    from lightning.fabric.accelerators.cuda import _check_cuda_matmul_precision

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    _check_cuda_matmul_precision.cache_clear()
    try:
        _check_cuda_matmul_precision(torch.device("cuda", 0))
    finally:
        _check_cuda_matmul_precision.cache_clear()


def test_make_inputs_is_reproducible_and_make_step_binds_a_scaler():
    model_a, x_a, y_a = tip6.make_inputs("cpu", seed=5)
    model_b, x_b, y_b = tip6.make_inputs("cpu", seed=5)
    assert torch.equal(x_a, x_b) and torch.equal(y_a, y_b)
    for p, q in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(p, q)
    assert tip6.DEMO_SIZE["d_model"] % tip6.DEMO_SIZE["nhead"] == 0
    for name in tip6.STEPS:
        step, optimizer = tip6.make_step(name, model_a)
        assert step(model_a, optimizer, x_a, y_a).dim() == 0
    step, _ = tip6.make_step("fp16", model_a)
    scaler = inspect.getclosurevars(step).nonlocals["scaler"]
    assert isinstance(scaler, torch.amp.GradScaler) and scaler.is_enabled()


class RecordingClassifier(tip6.LitClassifier):
    """training_step 안에서 Lightning이 켠 autocast를 기록합니다."""

    def training_step(self, batch, batch_idx):
        self.seen = (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        return super().training_step(batch, batch_idx)


def test_lightning_bf16_mixed_fits_on_cpu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trainer = tip6.fit_mixed_precision("cpu", "bf16-mixed", max_steps=3, num_samples=32)
    assert trainer.global_step == 3
    assert trainer.precision == "bf16-mixed"
    model = trainer.lightning_module
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert list(tmp_path.iterdir()) == []  # 로그나 체크포인트를 남기지 않습니다.


@pytest.mark.parametrize(("has_bf16", "expected"), [(True, "bf16-mixed"), (False, "32-true")])
def test_pick_precision_on_cpu_needs_bf16_instructions(monkeypatch, has_bf16, expected):
    monkeypatch.setattr(tip6, "cpu_supports_bf16", lambda: has_bf16)
    assert tip6.pick_precision("cpu") == expected


def test_cpu_supports_bf16_matches_cpu_flags():
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else None
    if flags is None:
        pytest.skip("/proc/cpuinfo가 없는 운영체제입니다")
    expected = "avx512_bf16" in flags or "amx_tile" in flags
    assert tip6.cpu_supports_bf16() == expected


def test_fp16_overflows_above_65504_and_bf16_does_not():
    # 표의 fp16 행: 범위가 좁아 65504보다 큰 값은 inf가 됩니다.
    assert torch.finfo(torch.float16).max == 65504
    assert torch.tensor(70000.0).half().isinf()
    assert not torch.tensor(70000.0).bfloat16().isinf()


# 새 프로세스에서 스니펫을 import한 뒤의 기본 설정을 읽습니다. 다른 테스트가 바꾼 전역 설정이
# 섞이지 않고, 스니펫이 import할 때 설정을 바꾸면(P4) 여기서 드러납니다.
DEFAULTS_AFTER_IMPORT = """
import json, sys, torch
import snippets.tip6_16bit

def read(getter):
    try:
        return getter()
    except RuntimeError:  # 새 API로 바꾼 뒤 옛 API로 읽으면 오류입니다.
        return "RuntimeError"

print(json.dumps({
    "conv": torch.backends.cudnn.conv.fp32_precision,
    "conv_allow_tf32": torch.backends.cudnn.allow_tf32,
    "matmul": torch.backends.cuda.matmul.fp32_precision,
    "matmul_allow_tf32": read(lambda: torch.backends.cuda.matmul.allow_tf32),
    "legacy": read(torch.get_float32_matmul_precision),
}))
"""


def defaults_after_importing_tip6(code=DEFAULTS_AFTER_IMPORT):
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_cudnn_convolutions_use_tf32_by_default_but_matmuls_do_not():
    # 표의 tf32 행: 합성곱(cuDNN)은 기본으로 TF32, 행렬 곱은 기본으로 TF32를 쓰지 않습니다.
    found = defaults_after_importing_tip6()
    assert found["conv"] == "tf32" and found["conv_allow_tf32"] is True
    assert found["matmul"] in ("none", "ieee") and found["matmul_allow_tf32"] is False
    assert found["legacy"] == "highest"


@pytest.mark.parametrize(
    "flip",
    [
        'torch.backends.cuda.matmul.fp32_precision = "tf32"',
        'torch.set_float32_matmul_precision("high")',
    ],
)
def test_tf32_default_check_fails_when_the_snippet_turns_matmul_tf32_on(flip):
    # 위 테스트가 실패할 수 있음을 보입니다: import 뒤에 행렬 곱을 TF32로 바꾸면 기본값이 아닙니다.
    code = DEFAULTS_AFTER_IMPORT.replace(
        "import snippets.tip6_16bit\n", f"import snippets.tip6_16bit\n{flip}\n"
    )
    assert flip in code
    found = defaults_after_importing_tip6(code)
    assert found["matmul"] == "tf32" and found["matmul_allow_tf32"] is not False
    assert found["legacy"] != "highest"


@pytest.mark.parametrize(
    ("capability", "expected"),
    [
        ((7, 0), "16-mixed"),
        ((7, 5), "16-mixed"),
        ((8, 0), "bf16-mixed"),
        ((9, 0), "bf16-mixed"),
        ((6, 0), "32-true"),
        ((6, 1), "32-true"),
        ((5, 2), "32-true"),
    ],
)
def test_pick_precision_uses_fp16_before_ampere(monkeypatch, capability, expected):
    # V100(7.0), T4·RTX 2080 Ti(7.5)에는 bf16 텐서 코어가 없으므로 fp16과 GradScaler를 씁니다.
    # P100(6.0), GTX 1080 Ti(6.1), Maxwell(5.x)에는 fp16 텐서 코어도 없으므로 fp32로 둡니다.
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert tip6.pick_precision("cuda") == expected


def test_lightning_16_mixed_adds_a_grad_scaler_and_bf16_mixed_does_not():
    from lightning.pytorch.plugins.precision import MixedPrecision

    with warnings.catch_warnings():
        # CUDA가 없는 컴퓨터에서는 GradScaler가 꺼진 채로 만들어진다고 경고합니다.
        warnings.simplefilter("ignore")
        fp16 = MixedPrecision("16-mixed", "cuda")
    assert isinstance(fp16.scaler, torch.amp.GradScaler)
    assert MixedPrecision("bf16-mixed", "cuda").scaler is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="동기화는 CUDA에서만 생깁니다")
@pytest.mark.parametrize("fused", [False, True])
def test_grad_scaler_reads_found_inf_on_the_host_unless_the_optimizer_is_fused(fused):
    import warnings

    model, x, y = tip6.make_inputs("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused)
    scaler = tip6.make_grad_scaler("cuda")
    tip6.train_step_fp16(model, optimizer, x, y, scaler)  # 워밍업
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            tip6.train_step_fp16(model, optimizer, x, y, scaler)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    syncs = sum("synchroniz" in str(w.message) for w in caught)
    assert (syncs == 0) if fused else (syncs > 0)


def test_lightning_bf16_mixed_autocasts_the_training_step():
    x, y = tip6.make_batch("cpu", batch_size=8)
    model = RecordingClassifier()
    trainer = L.Trainer(
        accelerator="cpu",
        precision="bf16-mixed",
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8))
    assert model.seen == (True, torch.bfloat16)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_article_precision_16_warns_and_becomes_bf16_on_cpu(tmp_path, monkeypatch):
    # 페이지의 최신 API 노트: 정수 16은 경고 두 개를 내고, CPU에서는 bf16-mixed가 됩니다.
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning) as record:
        trainer = tip6.article_trainer()
    messages = [str(w.message) for w in record if "precision" in str(w.message)]
    assert messages == ARTICLE_WARNINGS
    assert all(page_quotes("tips/06-16bit.md", m) for m in messages)
    assert trainer.precision == "bf16-mixed"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
def test_peak_memory_needs_cuda_and_runs_nothing_without_it():
    calls = []
    with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
        tip6.peak_memory_of(lambda: calls.append(1))
    assert calls == []


def test_cpu_supports_fp16_matches_cpu_flags():
    if not os.path.exists("/proc/cpuinfo"):
        pytest.skip("/proc/cpuinfo가 없는 운영체제입니다")
    flags = open("/proc/cpuinfo").read().split()
    assert tip6.cpu_supports_fp16() == ("avx512_fp16" in flags or "amx_fp16" in flags)


TINY = {"d_model": 32, "nhead": 2, "num_layers": 1, "batch_size": 4, "seq_len": 16}


@pytest.mark.parametrize("has_16bit", [False, True])
def test_main_times_16bit_only_where_the_cpu_has_the_instructions(monkeypatch, capsys, has_16bit):
    monkeypatch.setattr(tip6, "cpu_supports_bf16", lambda: has_16bit)
    monkeypatch.setattr(tip6, "cpu_supports_fp16", lambda: has_16bit)
    tip6.main("cpu", size=TINY)
    out = capsys.readouterr().out
    assert "fp32: 첫 손실" in out and "tf32: 첫 손실" in out
    for name in ("bf16", "fp16"):
        skipped = f"이 CPU에는 {name} 명령이 없어 느린 경로로 계산하므로 시간은 재지 않습니다"
        assert (skipped in out) != has_16bit
        assert (f"{name}: 첫 손실" in out) and (
            re.search(rf"{name}: 첫 손실 [\d.]+, 스텝 하나", out) is not None
        ) == has_16bit


def test_main_runs_on_cpu(capsys):
    # 작은 모델로 흐름만 확인합니다. 기본 크기의 fp16은 CPU에서 스텝 하나에 수 초가 걸리고,
    # 기본 크기 그대로의 실행은 노트북 실행 테스트가 합니다.
    tip6.main("cpu", size=TINY)
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    for name in tip6.STEPS:
        assert f"{name}: 첫 손실" in out
    assert "CPU의 숫자로 GPU의 속도를 짐작할 수는 없습니다" in out
    assert "최고 메모리" not in out
