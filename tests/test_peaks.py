"""guide/peaks.py와 guide/peaks.toml의 테스트(이슈 22 항목 5): GPU마다 공개된 밀집 bf16 최고 성능.

MFU의 분모가 되는 표라서, 희소성(2:4)을 켠 큰 숫자를 적거나 이름이 같은 제품을 잘못 고르면
페이지의 MFU가 두 배로 틀립니다. 모르는 GPU나 전력 한도는 추측하지 않고 None입니다.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from guide import peaks

# 데이터시트가 쓰는 희소성 값: "1,979 TFLOPS with sparsity", "(624 with sparsity)", "4.5 PFLOPS per
# GPU with sparsity". 밀집 값은 그 절반입니다.
SPARSE = re.compile(r"([\d,.]+)\s*(PFLOPS|TFLOPS)?\s*(?:per GPU\s*)?with sparsity")
# 밀집 값과 희소성 값을 나란히 적는 데이터시트: "125 TF | 250 TF*", "362.05 | 733* TFLOPS".
# 별표가 희소성 값입니다.
PAIR = re.compile(r"([\d,.]+)\s*(?:TF|TFLOPS)?\s*\|\s*([\d,.]+)\s*(?:TF|TFLOPS)?\*")


def test_every_entry_parses_and_names_its_source():
    raw = tomllib.loads(peaks.PEAKS.read_text(encoding="utf-8"))["gpu"]
    loaded = peaks.load()
    assert len(loaded) == len(raw) >= 10
    for peak in loaded:
        assert peak.label and peak.name and peak.bf16_dense_tflops > 0
        assert re.compile(peak.name)  # 이름은 정규식입니다
        assert len(peak.source) > 20 and re.search(
            r"Datasheet|whitepaper|specifications", peak.source
        )
    assert len({peak.label for peak in loaded}) == len(loaded)


def number(text: str) -> float:
    return float(text.replace(",", ""))


def dense_matches(peak: peaks.Peak) -> bool:
    pair = PAIR.search(peak.source)
    if pair and "with sparsity" in peak.source:
        # 데이터시트가 적은 밀집 값을 그대로 씁니다. 희소성 값의 절반과 2% 넘게 다르면 두 값을
        # 잘못 옮긴 것입니다(L40S는 362.05와 733/2로 1.2% 다릅니다).
        dense, sparse = number(pair[1]), number(pair[2])
        return peak.bf16_dense_tflops == dense and abs(dense - sparse / 2) <= 0.02 * sparse / 2
    found = SPARSE.search(peak.source)
    if not found:
        return False  # 출처에 희소성 값이 있어야 밀집 값인지 확인할 수 있습니다
    sparse = number(found[1]) * (1000 if found[2] == "PFLOPS" else 1)
    return abs(peak.bf16_dense_tflops - sparse / 2) <= 0.01 * sparse / 2


@pytest.mark.parametrize("peak", peaks.load(), ids=lambda p: p.label)
def test_the_table_holds_dense_figures_half_the_sparse_ones(peak):
    assert dense_matches(peak)


def test_the_dense_check_can_fail():
    source = (
        "NVIDIA H100 Tensor Core GPU Datasheet: BFLOAT16 Tensor Core 1,979 TFLOPS with sparsity"
    )
    assert not dense_matches(peaks.Peak("H100 SXM5", "H100", 1979, source))  # 희소성 값을 적음
    assert not dense_matches(peaks.Peak("H100 SXM5", "H100", 989, "NVIDIA datasheet, 989 TFLOPS"))
    assert dense_matches(peaks.Peak("H100 SXM5", "H100", 989, source))


def test_the_dense_check_of_a_printed_pair_can_fail():
    source = (
        "NVIDIA L40S GPU Datasheet: BFLOAT16 Tensor Core 362.05 | 733* TFLOPS (* with sparsity)"
    )
    assert dense_matches(peaks.Peak("L40S", "L40S", 362.05, source))
    assert not dense_matches(peaks.Peak("L40S", "L40S", 733, source))  # 희소성 값을 적음
    assert not dense_matches(peaks.Peak("L40S", "L40S", 366.5, source))  # 적힌 밀집 값이 아님
    # 두 값이 절반의 관계가 아니면 옮겨 적다 틀린 것입니다(L40의 181.05를 L40S에 적은 경우).
    wrong = source.replace("362.05", "181.05")
    assert not dense_matches(peaks.Peak("L40S", "L40S", 181.05, wrong))


@pytest.mark.parametrize(
    ("device_name", "power_w", "label"),
    [
        ("NVIDIA A100-SXM4-80GB", 400.0, "A100 SXM4 (40/80GB)"),
        ("NVIDIA A100-PCIE-40GB", 250.0, "A100 PCIe (40/80GB)"),
        ("NVIDIA L4", 72.0, "L4"),
        ("NVIDIA L40S", 350.0, "L40S"),
        ("NVIDIA A10", 150.0, "A10"),
        ("NVIDIA GeForce RTX 4090", 450.0, "GeForce RTX 4090"),
        ("NVIDIA H100 80GB HBM3", 700.0, "H100 SXM5"),
        ("NVIDIA H100 PCIe", 350.0, "H100 PCIe"),
        ("NVIDIA H100 NVL", 400.0, "H100 NVL"),
        ("NVIDIA H200", 700.0, "H200 SXM (700 W)"),
        ("NVIDIA H200", 600.0, "H200 NVL (≤ 600 W)"),
        ("NVIDIA H200 NVL", 600.0, "H200 NVL (≤ 600 W)"),
        ("NVIDIA B200", 1000.0, "B200 (HGX)"),
    ],
)
def test_a_device_name_and_power_limit_pick_exactly_one_entry(device_name, power_w, label):
    assert peaks.match(device_name, power_w).label == label


def test_a10g_and_unknown_gpus_get_no_peak():
    # A10G(AWS)는 NVIDIA 데이터시트가 없어 표에 없습니다. A10 항목이 A10G나 A100에 맞으면 안 됩니다.
    assert peaks.match("NVIDIA A10G", 300.0) is None
    assert peaks.match("NVIDIA L40", 300.0) is None  # L40S 항목이 L40에 맞으면 안 됩니다
    assert peaks.match("NVIDIA A100-SXM4-80GB", 400.0).label == "A100 SXM4 (40/80GB)"


def test_h200_sxm_and_nvl_differ_only_by_power_and_in_their_peak():
    sxm, nvl = peaks.match("NVIDIA H200", 700.0), peaks.match("NVIDIA H200", 600.0)
    assert sxm.bf16_dense_tflops == 989 and nvl.bf16_dense_tflops == 835


@pytest.mark.parametrize(
    ("device_name", "power_w"),
    [
        ("NVIDIA H200", None),  # 전력 한도를 모르면 SXM인지 NVL인지 모릅니다
        ("NVIDIA H200 NVL", None),
        ("NVIDIA L40", 300.0),  # 표에 없는 GPU
        ("NVIDIA GeForce GTX 1080", 180.0),
        ("NVIDIA L4 Super", 72.0),
        ("Test GPU 9000", 700.0),
    ],
)
def test_an_unknown_gpu_or_power_limit_returns_none_instead_of_a_guess(device_name, power_w):
    assert peaks.match(device_name, power_w) is None
