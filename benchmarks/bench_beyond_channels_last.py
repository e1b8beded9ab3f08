"""더 나아가기 6 벤치마크: 합성곱 층 묶음의 순전파+역전파를 NCHW와 channels_last로 잽니다.

보통 합성곱, 그룹 합성곱(그룹당 채널 4개), 깊이별 합성곱을 fp32와 bf16 autocast로 따로 잽니다.
어느 쪽이 빠른지는 장치, dtype, 합성곱 종류에 따라 뒤집히므로 여섯 묶음을 모두 보여 줍니다.
합성곱 알고리즘마다 일의 양이 달라 같은 실행에서 잴 단순한 천장은 두지 않았습니다.
"""

import pytest
import torch

from snippets import beyond_channels_last as cl

PAGE = "channels-last"

SIZES = {
    "cuda": {"channels": 256, "batch": 64, "size": 56, "num_layers": 3},
    "cpu": {"channels": 32, "batch": 4, "size": 32, "num_layers": 3},
    "quick": {"channels": 8, "batch": 1, "size": 8, "num_layers": 1},
}
DTYPES = {"fp32": None, "bf16": torch.bfloat16}
# 변형 key → (형식을 정하는 함수, 역할)
FORMATS = {
    "nchw": (cl.keep_nchw, "baseline"),
    "channels-last": (cl.to_channels_last, "recommended"),
}


# 묶음(합성곱 종류 × dtype)마다 measures 표시를 붙여, 건너뛸 때 어느 묶음인지 남깁니다.
GROUPS = [
    pytest.param(kind, dtype, marks=pytest.mark.measures(f"{kind}-{dtype}"), id=f"{kind}-{dtype}")
    for kind in cl.KINDS
    for dtype in DTYPES
]


@pytest.mark.parametrize(("kind", "dtype"), GROUPS)
def test_conv_step(compare, bench_device, size_key, kind, dtype):
    size = SIZES[size_key]
    params = {**size, "groups": cl.KINDS[kind](size["channels"]), "dtype": dtype}
    group = compare(f"{kind}-{dtype}", params=params, per_call={"samples": size["batch"]})
    for fmt, (convert, role) in FORMATS.items():
        model, x = convert(*cl.make_inputs(bench_device, kind, **size))
        group.add(fmt, cl.train_step, model, x, DTYPES[dtype], key=f"{kind}-{dtype}-{fmt}",
                  role=role)  # fmt: skip
    for out in group.run().values():
        assert out.shape == x.shape


# 스윕: 채널 수에 따라 channels_last 대 NCHW, 보통 합성곱 fp32 3층. 합성곱 연산은 약
# 2·배치·크기²·채널²·9 ×3(순전파+역전파) FLOP이라 채널 256, 배치 4, 32×32에서 약 58 GFLOP입니다.
CHANNELS = {"quick": [4], "cpu": [8, 16, 32, 64, 128, 256], "cuda": [32, 64, 128, 256, 512]}
SWEEP_SHAPE = {"quick": {"batch": 1, "size": 8}, "cpu": {"batch": 4, "size": 32},
               "cuda": {"batch": 64, "size": 56}}  # fmt: skip


@pytest.mark.sweep("channels")
def test_channel_sweep(sweep, bench_device, size_key):
    run = sweep("channels")
    shape = SWEEP_SHAPE[size_key]
    for channels in CHANNELS[size_key]:
        sides = []
        for fmt in ("nchw", "channels-last"):
            convert, _ = FORMATS[fmt]
            model, x = convert(*cl.make_inputs(bench_device, "dense", channels=channels,
                                               num_layers=3, **shape))  # fmt: skip
            sides.append((cl.train_step, model, x, None))
        outs = run.point(channels, *sides, params=shape)
        assert outs[0].shape == outs[1].shape
