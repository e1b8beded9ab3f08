"""진단 규칙: 규칙 하나 = 증거(doctor.Doctor.evidence()의 dict)를 읽는 작은 함수 하나 = 페이지 하나.

torch를 가져오지 않으므로 합성한 증거로도 돌려 볼 수 있습니다(CUDA 규칙을 CPU에서 시험하는 방법).
규칙은 Check를 돌려줍니다: 찾은 것(findings), 또는 확인했고 괜찮다는 한 줄(fine), 또는 이 작업에서
볼 수 없었던 이유(skipped).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from torchdoctor.catalog import BY_KEY, NOT_RUN_ON_GPU

DATA_SHARE = 0.10  # 다음 배치를 기다린 몫이 이보다 크면 알립니다
FP32_MATMUL_SHARE = 0.5  # fp32 행렬 곱이 연산 시간에서 이보다 크면 팁 6
TF32_MATMUL_SHARE = 0.3
LAUNCH_OPS = 200  # 스텝당 연산 수
LAUNCH_MEDIAN_S = 20e-6  # 연산 하나의 GPU 시간 중앙값
LAUNCH_BUSY = 0.5  # GPU가 일한 몫
NUMERICS_NOTE = " 수치가 바뀌는 팁이므로 속도와 함께 손실도 확인해야 합니다."


@dataclass
class Check:
    findings: list[dict] = field(default_factory=list)
    fine: str = ""
    skipped: str = ""


def finding(key: str, message: str, *, file=None, line=None, share=None, evidence=None) -> dict:
    rule = BY_KEY[key]
    if rule.numerics:
        message += NUMERICS_NOTE
    return {
        "rule": key,
        "page": rule.page,
        "title": rule.title,
        "file": file,
        "line": line,
        "share": None if share is None else round(min(max(share, 0.0), 1.0), 4),
        "measured": None,
        "message": message,
        "evidence": evidence or {},
        "fix": rule.fix or None,
        "unverified": NOT_RUN_ON_GPU if rule.cuda_only else None,
    }


def percent(share: float) -> str:
    return f"{share:.0%}"


def data_share(ev: dict) -> float | None:
    """시간 창에서 스텝 시간 중 다음 배치를 기다린 몫."""
    total = sum(ev.get("step_s") or [])
    if total <= 0:
        return None
    return sum(ev.get("data_s") or []) / total


def compute_share(ev: dict) -> float:
    share = data_share(ev)
    return 1.0 if share is None else 1.0 - share


def on_cuda(ev: dict) -> bool:
    return ev.get("device") == "cuda"


# ----- 데이터 -----
def _data_wait(ev: dict, with_workers: bool) -> Check:
    loader, share = ev.get("loader"), data_share(ev)
    if loader is None:
        return Check(skipped="시간 창에서 DataLoader로 배치를 읽지 않았습니다")
    if share is None:
        return Check(skipped="시간 창에 이르지 못했습니다")
    if (loader["num_workers"] > 0) != with_workers:
        workers = loader["num_workers"]
        return Check(fine=f"로더의 워커가 {workers}개라 이 규칙의 경우가 아닙니다")
    if share < DATA_SHARE:
        return Check(
            fine=f"다음 배치를 기다린 몫 {percent(share)} (기준 {percent(DATA_SHARE)} 미만)"
        )
    workers = loader["num_workers"]
    if not with_workers:
        message = (
            f"스텝 시간의 {percent(share)}를 다음 배치를 기다리며 보냅니다."
            " 로더가 `num_workers=0`이라"
            f" 데이터셋 `{loader['dataset']}`의 일을 학습 프로세스가 혼자 합니다."
            " `num_workers`를 코어 수에 맞춰 늘려 보세요."
        )
        key = "data-wait"
    else:
        message = (
            f"워커가 {workers}개인데도 스텝 시간의 {percent(share)}를 다음 배치를 기다리며 보냅니다"
            f" (`persistent_workers={loader['persistent_workers']}`,"
            f" `prefetch_factor={loader['prefetch_factor']}`). 워커를 늘리거나 에폭마다 워커를 다시"
            " 띄우지 않게 `persistent_workers=True`를 써 보세요."
        )
        key = "data-wait-workers"
    return Check(
        [
            finding(
                key,
                message,
                file=loader["file"],
                line=loader["line"],
                share=share,
                evidence={"data_share": round(share, 4), "num_workers": workers},
            )
        ]
    )


def data_wait(ev: dict) -> Check:
    return _data_wait(ev, with_workers=False)


def data_wait_workers(ev: dict) -> Check:
    return _data_wait(ev, with_workers=True)


def pin_memory(ev: dict) -> Check:
    loader, share = ev.get("loader"), data_share(ev)
    if loader is None or share is None:
        return Check(skipped="시간 창에서 DataLoader로 배치를 읽지 않았습니다")
    if loader["pin_memory"]:
        return Check(fine="로더가 `pin_memory=True`입니다")
    if share < DATA_SHARE:
        return Check(fine=f"다음 배치를 기다린 몫 {percent(share)}: 복사가 병목이 아닙니다")
    message = (
        "CUDA로 학습하는데 로더에 `pin_memory=True`가 없고,"
        f" 스텝의 {percent(share)}를 배치를 기다리며"
        " 보냅니다. 고정된 메모리(pinned memory)의 배치는 `.to(device, non_blocking=True)`로 계산과"
        " 겹쳐 복사할 수 있습니다."
    )
    return Check(
        [
            finding(
                "unpinned-batches", message, file=loader["file"], line=loader["line"], share=share
            )
        ]
    )


# ----- 호스트와 장치 -----
def host_sync(ev: dict) -> Check:
    if not ev.get("call_steps"):
        return Check(skipped="호출 탐침 스텝에 이르지 못했습니다")
    rows = ev.get("syncs") or []
    if not rows:
        library = ev.get("library_syncs_per_step") or 0
        extra = f" (라이브러리 안에서 스텝당 {library:g}번)" if library else ""
        return Check(
            fine=f"탐침 스텝 {ev['call_steps']}개에서 스텝마다 부른 동기화 호출 없음{extra}"
        )
    findings = []
    for row in rows:
        if on_cuda(ev):
            why = "호스트가 GPU의 일이 끝나기를 기다리는(동기화하는) 호출입니다."
        else:
            why = (
                "CPU에서는 기다림이 없지만 GPU에서라면 호스트가 장치를 기다리는(동기화하는)"
                " 호출입니다."
            )
        message = (
            f"스텝마다 {row['what']} 호출이 {row['per_step']:g}번 있습니다. {why}"
            " 값을 장치에 모아 두었다가 가끔 한 번에 읽으세요."
        )
        findings.append(
            finding(
                "host-sync",
                message,
                file=row["file"],
                line=row["line"],
                evidence={"per_step": row["per_step"], "call": row["what"]},
            )
        )
    return Check(findings)


def host_tensor_move(ev: dict) -> Check:
    if not ev.get("call_steps"):
        return Check(skipped="호출 탐침 스텝에 이르지 못했습니다")
    rows = ev.get("moves") or []
    if not rows:
        return Check(fine="스텝마다 호스트에서 만들어 옮기는 텐서 없음")
    findings = []
    for row in rows:
        message = (
            f"스텝마다 {row['per_step']:g}번, `device=` 없이 호스트에서 만든 텐서를"
            " 장치로 옮깁니다."
            " `torch.rand(..., device=device)`처럼 장치에서 바로 만드세요."
        )
        if not on_cuda(ev):
            message += (
                " (CPU에서는 옮길 곳이 같아 복사가 없지만 GPU에서라면 스텝마다"
                " 호스트→장치 복사입니다.)"
            )
        findings.append(
            finding(
                "host-tensor-move",
                message,
                file=row["file"],
                line=row["line"],
                evidence={"per_step": row["per_step"]},
            )
        )
    return Check(findings)


def data_parallel(ev: dict) -> Check:
    if not ev.get("steps_seen"):
        return Check(skipped="옵티마이저 스텝을 보지 못했습니다")
    rows = ev.get("data_parallel") or []
    if not rows:
        return Check(fine="`nn.DataParallel` 없음")
    row = rows[0]
    message = (
        "`nn.DataParallel`로 감싼 모델을 씁니다. 한 프로세스가 GPU마다 모델을 복제하고"
        " 결과를 모으므로"
        " 전역 인터프리터 락(GIL)과 복제 비용에 막힙니다. 분산 데이터 병렬(DDP)로 바꾸세요."
    )
    return Check([finding("data-parallel", message, file=row["file"], line=row["line"])])


# ----- 계산 -----
def fp32_matmul(ev: dict) -> Check:
    ops = ev.get("ops")
    if not ops or not ops.get("op_s"):
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    matmul = ops["matmul_s"]
    share_of_ops = matmul["fp32"] / ops["op_s"]
    if matmul["low"] > 0:
        return Check(fine="행렬 곱이 이미 16비트(autocast 등)로 돕니다")
    if share_of_ops < FP32_MATMUL_SHARE:
        return Check(
            fine=f"fp32 행렬 곱이 연산 시간의 {percent(share_of_ops)} (기준 "
            f"{percent(FP32_MATMUL_SHARE)} 미만)"
        )
    site = (ops.get("matmul_sites") or [{}])[0]
    message = (
        f"fp32 행렬 곱이 연산 시간의 {percent(share_of_ops)}를 차지하는데 autocast가 없습니다."
        " `torch.autocast(device_type, dtype=torch.bfloat16)`로 순전파를 감싸 보세요"
        " (CPU에서는 bf16 명령이 있는 CPU에서만 빨라집니다)."
    )
    return Check(
        [
            finding(
                "fp32-matmul",
                message,
                file=site.get("file"),
                line=site.get("line"),
                share=share_of_ops * compute_share(ev),
                evidence={"fp32_matmul_share_of_ops": round(share_of_ops, 4)},
            )
        ]
    )


def tf32_off(ev: dict) -> Check:
    if not on_cuda(ev):
        return Check(skipped="CUDA에서만 봅니다")
    gpu, ops = ev.get("gpu") or {}, ev.get("ops")
    if not ops or not ops.get("op_s"):
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    if (gpu.get("capability") or [0])[0] < 8:
        return Check(fine="이 GPU에는 TF32가 없습니다")
    if ev["flags"].get("tf32_matmul"):
        return Check(fine="TF32가 켜져 있습니다")
    share = ops["matmul_s"]["fp32"] / ops["op_s"]
    if share < TF32_MATMUL_SHARE:
        return Check(fine=f"fp32 행렬 곱이 GPU 시간의 {percent(share)}")
    site = (ops.get("matmul_sites") or [{}])[0]
    message = (
        f"TF32가 있는 GPU인데 TF32가 꺼져 있고 fp32 행렬 곱이 GPU 시간의 {percent(share)}입니다."
        ' `torch.set_float32_matmul_precision("high")`로 켜 보세요.'
    )
    return Check(
        [
            finding(
                "tf32-off",
                message,
                file=site.get("file"),
                line=site.get("line"),
                share=share * compute_share(ev),
            )
        ]
    )


def fused_optimizer(ev: dict) -> Check:
    optimizers = ev.get("optimizers") or []
    if not optimizers:
        return Check(skipped="옵티마이저 스텝을 보지 못했습니다")
    share = None
    if ev.get("optimizer_s") and ev.get("step_s"):
        share = statistics.median(ev["optimizer_s"]) / statistics.median(ev["step_s"])
    findings, seen = [], set()
    for opt in optimizers:
        if not opt["has_fused"] or opt["fused"] or not opt["module"].startswith("torch.optim"):
            continue
        site = (opt["class"], opt["file"], opt["line"])
        if site in seen:
            # 같은 줄에서 만든 옵티마이저 여럿(함수를 여러 번 부른 작업)은 한 번만 알립니다
            continue
        seen.add(site)
        path = "for-loop 기본 경로" if not opt["foreach"] else "foreach 경로"
        message = (
            f"`{opt['class']}`의 갱신이 {path}로 돕니다. 이 옵티마이저에는 모든 매개변수를"
            " 커널 하나로 갱신하는 `fused=True` 경로가 있습니다:"
            f" `{opt['class']}(..., fused=True)`."
        )
        if share is not None:
            message += f" 옵티마이저 스텝이 학습 스텝의 {percent(share)}를 차지합니다."
        findings.append(
            finding("fused-optimizer", message, file=opt["file"], line=opt["line"], share=share)
        )
    if not findings:
        names = ", ".join(sorted({o["class"] for o in optimizers}))
        return Check(fine=f"옵티마이저({names})가 융합 경로를 쓰거나 융합 경로가 없습니다")
    return Check(findings)


def debug_tools(ev: dict) -> Check:
    debug = ev.get("debug") or {}
    if not ev.get("steps_seen"):
        return Check(skipped="옵티마이저 스텝을 보지 못했습니다")
    findings = []
    for key, name, fix in (
        ("anomaly", "이상 탐지(`detect_anomaly`)", "문제를 찾은 뒤에는 끄세요."),
        ("profiler", "프로파일러", "필요한 몇 스텝만 `schedule`로 기록하세요."),
    ):
        steps = debug.get(f"{key}_steps", 0)
        if not steps:
            continue
        site = debug.get(f"{key}_at") or [None, None]
        message = (
            f"학습 스텝 {steps}개에서 {name}가 켜져 있었습니다. 스텝마다 비용을 더합니다. {fix}"
        )
        findings.append(
            finding(
                "debug-tools",
                message,
                file=site[0],
                line=site[1],
                evidence={"steps": steps, "tool": key},
            )
        )
    return Check(findings) if findings else Check(fine="이상 탐지와 프로파일러가 꺼져 있습니다")


def eval_autograd(ev: dict) -> Check:
    rows = ev.get("eval_autograd") or []
    if not rows:
        return Check(fine="변화도 기록을 켠 채 도는 평가 순전파 없음")
    findings = []
    for row in rows:
        message = (
            f"`model.eval()`인 모델의 순전파를 변화도 기록을 켠 채로 {row['count']}번 돌렸고 뒤에"
            " 옵티마이저 스텝이 없었습니다. 평가는 `torch.inference_mode()`(또는 `torch.no_grad()`)"
            " 안에서 돌리세요."
        )
        findings.append(
            finding(
                "eval-autograd",
                message,
                file=row["file"],
                line=row["line"],
                evidence={"forwards": row["count"]},
            )
        )
    return Check(findings)


def attention(ev: dict) -> Check:
    if not ev.get("call_steps"):
        return Check(skipped="호출 탐침 스텝에 이르지 못했습니다")
    rows = ev.get("attention") or []
    if not rows:
        return Check(fine="행렬 곱 → softmax → 행렬 곱으로 이어지는 어텐션 없음")
    findings = []
    for row in rows:
        message = (
            "행렬 곱 → softmax → 행렬 곱으로 손으로 쓴 어텐션을"
            f" 스텝마다 {row['per_step']:g}번 부릅니다."
            " `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=...)` 한 줄로"
            " 바꾸면 점수 행렬을 메모리에 만들지 않는 커널을 씁니다."
        )
        findings.append(finding("attention", message, file=row["file"], line=row["line"]))
    return Check(findings)


# ----- CUDA에서만 -----
def launch_bound(ev: dict) -> Check:
    if not on_cuda(ev):
        return Check(skipped="CUDA에서만 봅니다")
    ops, step = ev.get("ops"), ev.get("op_step_s")
    if not ops or not step or ops.get("median_op_s") is None:
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    busy = ops["op_s"] / step
    if ops["ops"] <= LAUNCH_OPS or ops["median_op_s"] >= LAUNCH_MEDIAN_S or busy >= LAUNCH_BUSY:
        return Check(fine=f"연산 {ops['ops']}개, GPU가 일한 몫 {percent(min(busy, 1.0))}")
    message = (
        f"스텝당 연산이 {ops['ops']}개이고 하나의 GPU 시간 중앙값이"
        f" {ops['median_op_s'] * 1e6:.0f} µs라, GPU가 스텝의 {percent(busy)}만 일합니다. 커널을"
        " 띄우는 호스트가 병목입니다: `torch.compile`로 커널을 합치거나"
        " CUDA 그래프(cuda-graphs 페이지)를"
        " 쓰세요."
    )
    return Check([finding("launch-bound", message, share=1.0 - busy)])


def cudnn_benchmark(ev: dict) -> Check:
    if not on_cuda(ev):
        return Check(skipped="CUDA에서만 봅니다")
    ops = ev.get("ops")
    if not ops:
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    conv = ops["conv"]
    if not conv["count"]:
        return Check(fine="합성곱 없음")
    if ev["flags"].get("cudnn_benchmark"):
        return Check(fine="`cudnn.benchmark`가 켜져 있습니다")
    if conv["shapes"] > 1:
        return Check(fine="합성곱 입력 모양이 스텝 안에서 바뀝니다(benchmark가 매번 다시 고릅니다)")
    message = (
        f"합성곱 {conv['count']}번의 입력 모양이 같은데 `torch.backends.cudnn.benchmark`가 꺼져"
        " 있습니다. 모양이 바뀌지 않는 학습이면 `torch.backends.cudnn.benchmark = True`로 첫 스텝에"
        " 가장 빠른 알고리즘을 고르게 하세요."
    )
    return Check([finding("cudnn-benchmark", message)])


def channels_last(ev: dict) -> Check:
    if not on_cuda(ev):
        return Check(skipped="CUDA에서만 봅니다")
    ops = ev.get("ops")
    if not ops:
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    conv = ops["conv"]
    if not conv["count"]:
        return Check(fine="합성곱 없음")
    if conv["nchw"] < conv["count"]:
        return Check(fine="합성곱 입력이 이미 channels_last입니다")
    message = (
        f"4차원 합성곱 입력 {conv['count']}개가 모두 NCHW(contiguous)입니다."
        " `model.to(memory_format=torch.channels_last)`와 입력의 `.to(memory_format=...)`로"
        " 텐서 코어가 좋아하는 NHWC 배치를 써 보세요(특히 16비트에서)."
    )
    return Check([finding("channels-last", message)])


FUNCTIONS = {
    "data-wait": data_wait,
    "data-wait-workers": data_wait_workers,
    "unpinned-batches": pin_memory,
    "host-sync": host_sync,
    "host-tensor-move": host_tensor_move,
    "data-parallel": data_parallel,
    "fp32-matmul": fp32_matmul,
    "tf32-off": tf32_off,
    "fused-optimizer": fused_optimizer,
    "debug-tools": debug_tools,
    "eval-autograd": eval_autograd,
    "attention": attention,
    "launch-bound": launch_bound,
    "cudnn-benchmark": cudnn_benchmark,
    "channels-last": channels_last,
}


def evaluate(ev: dict) -> dict[str, Check]:
    """모든 규칙을 돌립니다: 규칙 key → Check."""
    checks = {}
    for key, function in FUNCTIONS.items():
        rule = BY_KEY[key]
        if rule.cuda_only and not on_cuda(ev):
            checks[key] = Check(skipped="CUDA에서만 봅니다")
            continue
        checks[key] = function(ev)
    return checks
