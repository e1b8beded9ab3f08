"""더 나아가기 3 벤치마크: AdamW 한 스텝을 for-loop, foreach, fused로 잽니다.

옵티마이저 스텝은 계산이 적고 메모리를 많이 옮기는 일입니다. 그래서 천장은 같은 바이트를 옮기는
장치 안 복사(읽기+쓰기)입니다: AdamW 한 스텝은 적어도 가중치, 변화도, 두 모멘트를 읽고 가중치와 두
모멘트를 씁니다(텐서 7개 분량). 같은 바이트의 복사보다 빠를 수는 없습니다.
"""

import pytest
import torch

from measuring import ceilings
from snippets import beyond_fused_optimizers as bf

PAGE = "fused-optimizers"

# (텐서 수, 텐서 하나의 원소 수). 작은 텐서가 많을수록 for-loop의 연산 호출 비용이 드러납니다.
SIZES = {"quick": (4, 256), "cpu": (64, 16384), "cuda": (256, 1 << 18)}

# 기준은 독자가 아무것도 주지 않았을 때 그 장치가 고르는 경로입니다(torch.optim의 기본값):
# CPU는 for-loop, CUDA는 foreach. 기준이 장치마다 다르므로 표에 기준의 이름이 함께 나옵니다.
DEFAULT_PATH = {"cpu": "for-loop", "cuda": "foreach"}
MAKERS = {
    "for-loop": lambda params: torch.optim.AdamW(params, foreach=False),
    "foreach": lambda params: torch.optim.AdamW(params, foreach=True),
    "fused": lambda params: torch.optim.AdamW(params, fused=True),
}


def role_of(name, device):
    if name == "fused":
        return "recommended"
    return "baseline" if name == DEFAULT_PATH[device.type] else "other"


@pytest.mark.measures("step")
def test_adamw_step(compare, bench_device, size_key):
    num_tensors, numel = SIZES[size_key]
    group = compare("step", params={"tensors": num_tensors, "numel": numel})
    for name, make in MAKERS.items():
        params = bf.make_inputs(bench_device, num_tensors, numel)
        optimizer = make(params)
        optimizer.step()  # 첫 스텝은 모멘트 텐서를 만드는 일이라 재지 않습니다.
        group.add(name, optimizer.step, key=f"adamw-{name}", role=role_of(name, bench_device),
                  per_call={"bytes": bf.adamw_bytes_per_step(params)},
                  ceiling="copy-same-bytes")  # fmt: skip
    group.run()


@pytest.mark.measures("ceiling")
def test_copy_same_bytes_ceiling(compare, bench_device, size_key):
    num_tensors, numel = SIZES[size_key]
    # 복사는 원본을 읽고 대상에 쓰므로 2 × nbytes를 옮깁니다. 텐서 7개 분량이 되도록 3.5개 분량을
    # 복사합니다.
    numel_copied = 7 * num_tensors * numel // 2
    group = compare("ceiling", params={"mib": round(2 * 4 * numel_copied / 2**20, 1)})
    ceilings.add_copy(group, "copy-same-bytes", numel_copied, bench_device)
    group.run()


# 스윕: 텐서 크기와 텐서 수에 따라 fused 대 그 장치의 기본 경로. 옵티마이저 스텝이 옮기는 바이트는
# 텐서 7개 분량 × 원소 수 × 4바이트입니다(64개 × 262,144개면 448 MiB). for-loop와 foreach는 텐서마다
# 연산을 부르는 비용이 있어, 작은 텐서가 많을수록 fused의 이득이 큽니다.
NUMELS = {"quick": [64], "cpu": [256, 1024, 4096, 16384, 65536, 262144],
          "cuda": [4096, 16384, 65536, 262144, 1048576]}  # fmt: skip
TENSOR_COUNTS = {"quick": [2], "cpu": [4, 16, 64, 256, 1024], "cuda": [16, 64, 256, 1024, 4096]}


def optimizer_point(run, x, device, num_tensors, numel):
    default = DEFAULT_PATH[device.type]
    sides = []
    for name in (default, "fused"):
        params = bf.make_inputs(device, num_tensors, numel)
        optimizer = MAKERS[name](params)
        optimizer.step()  # 첫 스텝은 모멘트 텐서를 만드는 일이라 재지 않습니다.
        sides.append((optimizer.step,))
    run.point(x, *sides, params={"tensors": num_tensors, "numel": numel, "path": default})


@pytest.mark.sweep("numel")
def test_numel_sweep(sweep, bench_device, size_key):
    run = sweep("numel")
    for numel in NUMELS[size_key]:
        optimizer_point(run, numel, bench_device, 64 if size_key != "quick" else 4, numel)


@pytest.mark.sweep("tensors")
def test_tensor_count_sweep(sweep, bench_device, size_key):
    run = sweep("tensors")
    for count in TENSOR_COUNTS[size_key]:
        optimizer_point(run, count, bench_device, count, 4096 if size_key != "quick" else 64)
