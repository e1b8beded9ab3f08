"""snippets/beyond_sdpa.py의 테스트: SDPA가 손으로 쓴 어텐션과 같은 값을 내고, 고른 커널을 맞게 알려
주는지 봅니다."""

import os

import pytest
import torch
from torch.nn.attention import SDPBackend
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.bench_beyond_sdpa import attention_flops
from snippets import beyond_sdpa as sdpa
from tests.site_build import page_quotes

# (배치, 헤드, 길이, 헤드 차원)
SHAPES = [(1, 1, 1, 8), (2, 4, 17, 16), (3, 2, 64, 32), (1, 3, 130, 64)]
# dtype마다 허용 오차: 계산 순서가 달라 생기는 반올림 차이만큼입니다.
TOLERANCES = {torch.float32: 1e-5, torch.bfloat16: 3e-2}
VARIANTS = {
    "sdpa": sdpa.attention_sdpa,
    "mask": sdpa.attention_sdpa_with_mask,
    "math": sdpa.with_backend(SDPBackend.MATH, sdpa.attention_sdpa),
    "flash": sdpa.with_backend(SDPBackend.FLASH_ATTENTION, sdpa.attention_sdpa),
}


@pytest.mark.parametrize("dtype", list(TOLERANCES), ids=str)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_sdpa_matches_hand_written_attention_forward_and_backward(name, shape, dtype):
    q, k, v, grad_out = sdpa.make_inputs("cpu", *shape, dtype=dtype, seed=sum(shape))
    expected = sdpa.forward_backward(sdpa.attention_by_hand, q, k, v, grad_out)
    actual = sdpa.forward_backward(VARIANTS[name], q, k, v, grad_out)
    tol = TOLERANCES[dtype]
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == dtype and a.shape == e.shape
        torch.testing.assert_close(a.float(), e.float(), rtol=tol, atol=tol)
    out_expected = sdpa.attention_by_hand(q, k, v)
    torch.testing.assert_close(
        VARIANTS[name](q, k, v).float(), out_expected.float(), rtol=tol, atol=tol
    )


def test_first_token_attends_only_to_itself():
    # 인과 마스크가 맞다면 첫 토큰의 출력은 첫 토큰의 v 그대로입니다.
    q, k, v, _ = sdpa.make_inputs("cpu", 2, 2, 9, 8, seed=1)
    for attention in (sdpa.attention_by_hand, sdpa.attention_sdpa, sdpa.attention_sdpa_with_mask):
        torch.testing.assert_close(attention(q, k, v)[..., 0, :], v[..., 0, :])


def test_forward_backward_does_not_accumulate_into_grad():
    q, k, v, grad_out = sdpa.make_inputs("cpu", 1, 2, 8, 8)
    sdpa.forward_backward(sdpa.attention_sdpa, q, k, v, grad_out)
    assert q.grad is None and k.grad is None and v.grad is None


def test_kernel_used_on_cpu():
    q, k, v, _ = sdpa.make_inputs("cpu", 1, 2, 16, 8)
    assert sdpa.kernel_used(sdpa.attention_sdpa, q, k, v) == "flash-cpu"
    # CPU의 flash 커널은 attn_mask도 받습니다(GPU의 flash 커널과 다릅니다).
    assert sdpa.kernel_used(sdpa.attention_sdpa_with_mask, q, k, v) == "flash-cpu"
    assert sdpa.kernel_used(VARIANTS["math"], q, k, v) == "math"
    assert sdpa.kernel_used(sdpa.attention_by_hand, q, k, v) == "math"
    # kernel_used는 입력을 떼어 내 쓰므로 원래 텐서에 변화도를 남기지 않습니다.
    assert q.grad is None


def test_forcing_a_kernel_that_cannot_run_raises_no_available_kernel():
    # pytorch#117354: fused 커널은 4차원 입력만 받습니다. 3차원으로 flash만 허용하면 실패합니다.
    q, k, v, _ = sdpa.make_inputs("cpu", 1, 2, 16, 8)
    flash_only = sdpa.with_backend(SDPBackend.FLASH_ATTENTION, sdpa.attention_sdpa)
    with pytest.warns(UserWarning, match="4 dimensional") as record:
        with pytest.raises(RuntimeError, match="No available kernel") as error:
            flash_only(q[0], k[0], v[0])
    # 페이지가 인용한 경고와 오류가 실제 메시지와 같은지 봅니다.
    assert page_quotes("beyond/05-sdpa.md", str(error.value))
    assert any(page_quotes("beyond/05-sdpa.md", str(w.message)) for w in record)
    # 기본 설정에서는 math로 조용히 물러나 계산합니다.
    out = sdpa.attention_sdpa(q[0], k[0], v[0])
    torch.testing.assert_close(out, sdpa.attention_by_hand(q, k, v)[0])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA GPU에서만 확인합니다")
def test_explicit_mask_rules_out_flash_on_cuda():
    q, k, v, _ = sdpa.make_inputs("cuda", 2, 4, 256, 64, dtype=torch.bfloat16)
    assert sdpa.kernel_used(sdpa.attention_sdpa_with_mask, q, k, v) != "flash"
    flash_only = sdpa.with_backend(SDPBackend.FLASH_ATTENTION, sdpa.attention_sdpa_with_mask)
    with pytest.raises(RuntimeError, match="No available kernel"):
        flash_only(q, k, v)


@pytest.mark.parametrize("shape", [(2, 3, 16, 8), (1, 2, 33, 4)])
def test_attention_flops_matches_torchs_flop_counter(shape):
    # 공식을 다시 적지 않고 FlopCounterMode가 실제로 실행된 행렬 곱을 센 값과 비교합니다.
    q, k, v, grad_out = sdpa.make_inputs("cpu", *shape)
    with FlopCounterMode(display=False) as counter:
        sdpa.forward_backward(sdpa.attention_by_hand, q, k, v, grad_out)
    assert counter.get_total_flops() == attention_flops(*shape)


@pytest.mark.skipif(
    torch.cuda.is_available(),
    reason=(
        "CUDA 빌드는 첫 SDPA 호출에서 순서를 다시 정하므로 "
        "test_cuda_build_moves_cudnn_first_on_sm90_and_sm100이 확인합니다"
    ),
)
def test_default_kernel_priority_is_flash_efficient_math_then_cudnn():
    # CPU 빌드는 정해 둔 순서를 바꾸지 않습니다. math는 언제나 쓸 수 있으므로 cuDNN은
    # 고르지 않습니다.
    q, k, v, _ = sdpa.make_inputs("cpu", 1, 2, 8, 8)
    sdpa.attention_sdpa(q, k, v)  # 한 번 부른 뒤에도 순서는 그대로입니다.
    assert sdpa.kernel_priority()[:4] == [
        "FLASH_ATTENTION",
        "EFFICIENT_ATTENTION",
        "MATH",
        "CUDNN_ATTENTION",
    ]


def cudnn_should_come_first(capability, cudnn_version, cuda_version, env):
    """torch의 check_prefer_cudnn_attention을 옮긴 규칙입니다.

    출처: aten/src/ATen/native/transformers/cuda/sdp_utils.cpp(pytorch/pytorch#162073 이후).
    """
    major, minor = capability
    if env.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "0").lower() in ("1", "true", "on", "yes", "y"):
        return False
    if cudnn_version is None or cudnn_version <= 91500 or major not in (9, 10):
        return False
    cuda_major = int(cuda_version.split(".")[0]) if cuda_version else 0
    return cuda_major >= 13 or minor in (0, 3)


def test_cudnn_rule_matches_the_page():
    # 페이지가 말한 경우들: H100(9.0)·B200(10.0)은 cuDNN 9.15.1부터 앞, A100(8.0)·4090(8.9)은 아님.
    assert cudnn_should_come_first((9, 0), 91501, "12.8", {})
    assert cudnn_should_come_first((10, 0), 91700, "13.0", {})
    assert not cudnn_should_come_first((9, 0), 91400, "12.8", {})
    assert not cudnn_should_come_first(
        (9, 0), 91501, "12.8", {"TORCH_CUDNN_SDPA_DEPRIORITIZED": "1"}
    )
    assert not cudnn_should_come_first((8, 0), 91501, "13.0", {})
    assert not cudnn_should_come_first((8, 9), 91501, "13.0", {})


@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA GPU에서만 커널 선택을 기록할 수 있습니다"
)
def test_cuda_build_moves_cudnn_first_on_sm90_and_sm100(record_property):
    q, k, v, _ = sdpa.make_inputs("cuda", 2, 4, 256, 64, dtype=torch.bfloat16)
    chosen = sdpa.kernel_used(sdpa.attention_sdpa, q, k, v)  # 첫 호출이 순서를 정합니다.
    capability = torch.cuda.get_device_capability()
    # torch는 실행 중인 cuDNN의 버전을 봅니다(휠에 든 것이 아니라 실제로 불러온 라이브러리).
    major, minor, patch = (
        torch._C._cudnn.getRuntimeVersion() if torch.backends.cudnn.is_available() else (0, 0, 0)
    )
    cudnn = major * 10000 + minor * 100 + patch or None
    record_property("sdpa_kernel", chosen)
    record_property("sdpa_priority", ",".join(sdpa.kernel_priority()))
    record_property("capability", f"{capability[0]}.{capability[1]}")
    record_property("cudnn", cudnn)
    if cudnn_should_come_first(capability, cudnn, torch.version.cuda, os.environ):
        assert sdpa.kernel_priority()[0] == "CUDNN_ATTENTION"
        assert chosen == "cudnn"
    else:
        assert sdpa.kernel_priority()[0] == "FLASH_ATTENTION"
        assert chosen != "cudnn"


def masked_attention(q, k, v, keep):
    """keep[i, j]가 참인 곳만 보는 어텐션을 손으로 계산합니다(테스트의 기준)."""
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    return torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1) @ v


@pytest.mark.parametrize(("q_len", "kv_len"), [(1, 9), (3, 7), (5, 5), (4, 12)])
def test_causal_lower_right_matches_a_hand_built_mask(q_len, kv_len):
    q, _, _, _ = sdpa.make_inputs("cpu", 2, 2, q_len, 8, seed=q_len)
    _, k, v, _ = sdpa.make_inputs("cpu", 2, 2, kv_len, 8, seed=kv_len + 100)
    # 질의 i(캐시 끝에서 q_len개)는 키 0 … i + (kv_len - q_len)까지 봅니다.
    lower_right = torch.ones(q_len, kv_len, dtype=torch.bool).tril(diagonal=kv_len - q_len)
    expected = masked_attention(q, k, v, lower_right)
    torch.testing.assert_close(sdpa.attention_with_cache(q, k, v), expected)


@pytest.mark.parametrize(("q_len", "kv_len"), [(1, 9), (3, 7)])
def test_is_causal_aligns_upper_left_when_lengths_differ(q_len, kv_len):
    q, _, _, _ = sdpa.make_inputs("cpu", 2, 2, q_len, 8, seed=1)
    _, k, v, _ = sdpa.make_inputs("cpu", 2, 2, kv_len, 8, seed=2)
    upper_left = torch.ones(q_len, kv_len, dtype=torch.bool).tril()
    wrong = sdpa.attention_sdpa(q, k, v)
    torch.testing.assert_close(wrong, masked_attention(q, k, v, upper_left))
    assert not torch.allclose(wrong, sdpa.attention_with_cache(q, k, v), atol=1e-3)


def test_decoding_one_token_with_the_cache_matches_the_full_sequence():
    # 길이 9의 시퀀스를 한 번에 계산한 마지막 토큰의 출력은
    # 캐시(k, v 9개)로 새 토큰 하나만 계산한 출력과 같아야 합니다.
    q, k, v, _ = sdpa.make_inputs("cpu", 2, 3, 9, 8, seed=5)
    full = sdpa.attention_sdpa(q, k, v)
    new_token = q[..., -1:, :]
    torch.testing.assert_close(sdpa.attention_with_cache(new_token, k, v), full[..., -1:, :])
    # is_causal=True로 같은 일을 하면 새 토큰이 키 0만 봅니다: 출력이 v의 첫 줄 그대로입니다.
    torch.testing.assert_close(sdpa.attention_sdpa(new_token, k, v), v[..., :1, :])


def test_main_runs_on_cpu(capsys):
    sdpa.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    assert "커널: flash-cpu" in out and "커널: math" in out
