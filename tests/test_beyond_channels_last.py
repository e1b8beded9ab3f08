"""snippets/beyond_channels_last.py의 테스트: channels_last로 바꿔도 출력과 변화도가 같고, 형식이
계층을 따라 이어지는지 봅니다."""

import copy
import json
from pathlib import Path

import pytest
import torch

from report import analysis
from snippets import beyond_channels_last as cl

# (채널, 배치, 크기, 층 수)
SHAPES = [(8, 1, 5, 1), (16, 2, 9, 2), (32, 3, 12, 3)]
# dtype마다 허용 오차. bf16 autocast는 합성곱 알고리즘에 따라 반올림이 달라집니다.
DTYPES = {"fp32": (None, 1e-4), "bf16": (torch.bfloat16, 5e-2)}


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", list(cl.KINDS))
def test_channels_last_gives_the_same_output_and_gradients(kind, shape, dtype):
    channels, batch, size, num_layers = shape
    autocast_dtype, tol = DTYPES[dtype]
    model, x = cl.make_inputs("cpu", kind, channels, batch, size, num_layers, seed=channels)
    slow_model, slow_x = cl.keep_nchw(copy.deepcopy(model), x.clone())
    fast_model, fast_x = cl.to_channels_last(copy.deepcopy(model), x.clone())
    out_slow = cl.train_step(slow_model, slow_x, autocast_dtype)
    out_fast = cl.train_step(fast_model, fast_x, autocast_dtype)
    torch.testing.assert_close(out_fast.float(), out_slow.float(), rtol=tol, atol=tol)
    for p_fast, p_slow in zip(fast_model.parameters(), slow_model.parameters(), strict=True):
        torch.testing.assert_close(p_fast.grad, p_slow.grad, rtol=tol, atol=tol)
    # 형식: 모양은 같고, 출력까지 channels_last가 이어집니다.
    assert fast_x.shape == slow_x.shape
    assert fast_x.is_contiguous(memory_format=torch.channels_last)
    if channels > 1 and size > 1:
        assert out_fast.is_contiguous(memory_format=torch.channels_last)
        assert not out_fast.is_contiguous()
        assert out_slow.is_contiguous()


def test_kinds_set_the_groups():
    for kind, groups in {"dense": 1, "grouped": 8, "depthwise": 32}.items():
        model, _ = cl.make_inputs("cpu", kind, channels=32)
        assert {m.groups for m in model if isinstance(m, torch.nn.Conv2d)} == {groups}


def test_view_on_channels_last_output_fails_and_flatten_features_works():
    model, x = cl.to_channels_last(*cl.make_inputs("cpu", "dense", 8, 2, 6, 1))
    out = model(x)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        out.view(out.size(0), -1)
    nchw_out = cl.keep_nchw(*cl.make_inputs("cpu", "dense", 8, 2, 6, 1))[0](x.contiguous())
    torch.testing.assert_close(cl.flatten_features(out), cl.flatten_features(nchw_out))
    assert cl.flatten_features(out).shape == (2, 8)


def test_main_runs_on_cpu(capsys):
    cl.main("cpu")
    out = capsys.readouterr().out
    assert "장치: cpu" in out
    for kind in cl.KINDS:
        assert f"fp32, {kind}:" in out and f"bf16 autocast, {kind}:" in out


RESULTS = Path(__file__).resolve().parent.parent / "results"
# 페이지의 문장: 공개한 CPU에서 그룹 합성곱은 fp32가 빨라졌고 bf16은 느려지지 않았습니다.
GROUPED_SENTENCE = {"grouped-fp32": ("faster",), "grouped-bf16": ("faster", "same")}


def grouped_problems(doc):
    """결과 파일에서 페이지가 그리는 판정(실행 사이의 구간 포함)이 문장과 맞는지 봅니다."""
    view = analysis.analyze(doc)["channels-last"]
    found = []
    for key, allowed in GROUPED_SENTENCE.items():
        ratio = view.group(key).recommended.ratio
        if ratio.verdict not in allowed:
            found.append(f"{key}: {ratio.low:.3g}–{ratio.high:.3g}배는 {allowed}이 아닙니다")
    return found


@pytest.mark.parametrize("path", sorted(RESULTS.glob("cpu-*.json")), ids=lambda p: p.stem[:24])
def test_every_published_cpu_file_agrees_with_the_grouped_sentence(path):
    # 그 CPU를 다시 재서 방향이 바뀌면 이 테스트가 실패해 문장을 고치게 합니다.
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert grouped_problems(doc) == []
    slower = copy.deepcopy(doc)
    for row in slower["pages"]["channels-last"]["benchmarks"]:
        if row["group"] == "grouped-bf16" and row["ratio"]:
            row["ratio"] = {**row["ratio"], "median": 0.9, "low": 0.88, "high": 0.92}
            row.pop("ratio_history", None)
    assert grouped_problems(slower)
