"""진단 규칙의 표: 규칙마다 사이트의 페이지 하나, 무엇을 보고 무엇을 알리는지.

torch를 가져오지 않습니다. 사이트 빌드(hooks/doctor_report.py)가 이 표로 각 페이지의 "진단기가
알려 주는 것" 상자를 그리고, 규칙 함수(torchdoctor/rules.py)가 같은 key를 씁니다.
"""

from __future__ import annotations

from dataclasses import dataclass

# 이 장치에서 규칙의 논리를 실제 작업으로 돌려 본 적이 있는지(보고서와 페이지에 씁니다)
NOT_RUN_ON_GPU = "GPU에서 아직 실행해 보지 않음"
# CUDA에서 배치를 기다린 몫을 재는 시계(데이터 규칙 둘이 같은 문장을 씁니다)
CUDA_CLOCK = (
    " CUDA에서는 그 몫을 CUDA 이벤트(GPU 시계)로 재어 배치를 기다리느라 GPU가 쉰 시간만"
    f" 셉니다({NOT_RUN_ON_GPU})."
)


@dataclass(frozen=True)
class Rule:
    key: str
    page: str  # guide/pages.toml의 페이지 id
    title: str  # 보고서의 짧은 이름
    reports: str  # 페이지 상자에 쓰는 한 문장: 진단기가 무엇을 보고 무엇을 알리는지
    cuda_only: bool = False
    numerics: bool = False  # 고치면 수치가 바뀌는 팁: 속도뿐 아니라 손실도 확인해야 합니다
    fix: str = ""  # 작업의 데이터로 고친 것을 재는 방법(fixes.py의 이름), 없으면 ""


RULES: tuple[Rule, ...] = (
    Rule(
        "data-wait",
        "tip1",
        "데이터 기다림(워커 0개)",
        "스텝 중 다음 배치를 기다린 몫이 10%를 넘고 `num_workers=0`이면, 로더를 도는 줄과 그 몫을"
        " 알리고, 작업이 끝난 뒤 같은 데이터셋으로 워커 수를 바꾼 로더를 만들어 배치를 읽는 시간을"
        " 섞인 라운드로 잽니다." + CUDA_CLOCK,
        fix="loader",
    ),
    Rule(
        "data-wait-workers",
        "dataloader-workers",
        "데이터 기다림(워커가 있어도)",
        "워커가 있는데도 배치를 기다린 몫이 10%를 넘으면, 로더의 `persistent_workers`와"
        " `prefetch_factor`를 알리고 워커를 더 둔 로더로 배치를 읽는 시간을 잽니다." + CUDA_CLOCK,
        fix="loader",
    ),
    Rule(
        "unpinned-batches",
        "tip2",
        "고정되지 않은 배치 메모리",
        "CUDA로 학습하면서 배치를 기다린 몫이 10%를 넘고 로더에 `pin_memory=True`가 없으면"
        " 알립니다. 프로파일러로 기록한 한 스텝에서 고정되지 않은 메모리에서 온 호스트→장치 복사를"
        " 세어 함께 알리고, 그 스텝에 그런 복사가 없으면 알리지 않습니다.",
        cuda_only=True,
    ),
    Rule(
        "host-sync",
        "tip3",
        "스텝마다 호스트 동기화",
        "탐침 스텝마다 빠짐없이 부른 `.item()`, `.tolist()`, `.cpu()`, `bool(텐서)`, 텐서 출력을"
        " 부른"
        ' 줄과 스텝당 횟수로 알립니다. CPU에서는 "GPU에서라면 동기화하는 호출"로 셉니다.'
        ' CUDA에서는 `set_sync_debug_mode("warn")`가 알린 동기화의 줄도 알리고, 동기화 호출 안에서'
        f" 호스트가 기다린 시간을 잽니다({NOT_RUN_ON_GPU}).",
    ),
    Rule(
        "host-tensor-move",
        "tip4",
        "호스트에서 만들어 옮기는 텐서",
        "`device=` 없이 만든 텐서를 같은 스텝에서 `.to(장치)`나 `.cuda()`로 옮기는 일이 스텝마다"
        " 있으면 그 줄을 알립니다.",
    ),
    Rule(
        "data-parallel",
        "tip5",
        "DataParallel",
        "`nn.DataParallel`로 감싼 모델의 순전파를 보면 그 줄을 알립니다.",
    ),
    Rule(
        "fp32-matmul",
        "tip6",
        "fp32 행렬 곱이 스텝을 차지함",
        "연산 탐침 스텝에서 fp32 행렬 곱이 연산 시간의 절반을 넘고 autocast가 없으면, 가장"
        " 오래 걸린"
        " 행렬 곱의 줄과 그 몫을 알립니다. 정밀도가 바뀌므로 손실도 확인하라고 덧붙입니다.",
        numerics=True,
    ),
    Rule(
        "tf32-off",
        "tf32",
        "TF32 꺼짐",
        "TF32가 있는 GPU(compute capability 8.0 이상)에서 fp32 행렬 곱이 스텝의 30%를 넘는데 TF32가"
        " 꺼져 있으면 알립니다. 정밀도가 바뀌므로 손실도 확인하라고 덧붙입니다.",
        cuda_only=True,
        numerics=True,
    ),
    Rule(
        "fused-optimizer",
        "fused-optimizers",
        "융합 경로를 쓰지 않는 옵티마이저",
        "`fused=` 경로가 있는 옵티마이저(Adam, AdamW, SGD 등)를 기본 경로로 쓰면 옵티마이저를 만든"
        " 줄과, 떼어 잴 수 있으면 스텝에서 옵티마이저가 차지한 몫을 알립니다.",
    ),
    Rule(
        "debug-tools",
        "no-autograd-eval",
        "켜 둔 디버깅 도구",
        "학습 스텝에서 이상 탐지(`detect_anomaly`)나 프로파일러가 켜져 있으면 켠 줄을 알립니다.",
    ),
    Rule(
        "eval-autograd",
        "no-autograd-eval",
        "autograd를 기록하는 평가",
        "`model.eval()`인 모델의 순전파가 변화도 기록을 켠 채로 돌고 옵티마이저 스텝이"
        " 뒤따르지 않으면"
        " 그 줄과 횟수를 알립니다.",
    ),
    Rule(
        "attention",
        "sdpa",
        "손으로 쓴 어텐션",
        "행렬 곱 → softmax → 행렬 곱으로 이어지는 호출을 보면 마지막 행렬 곱의 줄을 알리고"
        " `F.scaled_dot_product_attention`을 권합니다.",
    ),
    Rule(
        "launch-bound",
        "compile",
        "짧은 커널이 많은 스텝",
        "CUDA에서 연산이 많고(스텝당 200개 넘게) 하나하나가 짧으며(중앙값 20 µs 미만) GPU가 스텝의"
        " 절반도 일하지 않으면 `torch.compile`과 CUDA 그래프를 권합니다. 프로파일러로 기록한 한"
        " 스텝이 있으면 커널의 절반 넘게 20 µs보다 짧은지와 GPU가 쉰 몫을 그 스텝의 시간표로"
        " 봅니다.",
        cuda_only=True,
    ),
    Rule(
        "cudnn-benchmark",
        "cudnn-benchmark",
        "cudnn.benchmark 꺼짐",
        "CUDA에서 합성곱이 있고 입력 모양이 바뀌지 않는데 `torch.backends.cudnn.benchmark`가 꺼져"
        " 있으면 알립니다.",
        cuda_only=True,
    ),
    Rule(
        "channels-last",
        "channels-last",
        "NCHW 합성곱",
        "CUDA에서 4차원 합성곱 입력이 `channels_last`가 아니면 알립니다.",
        cuda_only=True,
    ),
)

BY_KEY = {rule.key: rule for rule in RULES}


def rules_for_page(page: str) -> list[Rule]:
    """한 페이지를 가리키는 규칙들(페이지 상자에 씁니다)."""
    return [rule for rule in RULES if rule.page == page]
