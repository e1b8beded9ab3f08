"""팁 5 벤치마크: DP와 DDP의 비교는 GPU가 2개 이상 있어야 잴 수 있습니다.

DataParallel은 한 프로세스가 여러 GPU에 모델을 복제하는 방식이라 GPU가 하나뿐이면 비교할 것이
없고, CPU에서는 아예 동작하지 않습니다. 숫자를 지어내지 않고 "재지 않음"과 그 이유를 결과 파일에
남깁니다. DDP 자체가 올바르게 동작하는지는 tests/test_tip5_ddp.py가 CPU(gloo)에서 확인합니다.
"""

import pytest
import torch

PAGE = "tip5"


def reason_not_measured(device: torch.device) -> str:
    if device.type != "cuda":
        return (
            "CUDA GPU가 없어서 재지 않았습니다. DataParallel은 GPU 전용이고, DP와 DDP를 비교하려면 "
            "GPU가 2개 이상 있어야 합니다."
        )
    count = torch.cuda.device_count()
    if count < 2:
        return (
            f"이 장치에는 GPU가 {count}개뿐이라 재지 않았습니다. DP와 DDP는 모델을 여러 GPU에 "
            "나눠 학습하는 방식이라 GPU가 2개 이상 있어야 비교할 수 있습니다."
        )
    return (
        f"GPU가 {count}개 있지만 DP와 DDP를 비교하는 벤치마크는 아직 없습니다. "
        "여러 GPU에서 검증하지 않은 코드로 숫자를 내지 않으려고 재지 않았습니다."
    )


@pytest.mark.measures("dp-vs-ddp")
def test_dp_vs_ddp(bench_device):
    pytest.skip(reason_not_measured(bench_device))
