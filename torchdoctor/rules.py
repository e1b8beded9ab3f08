"""진단 규칙: 규칙 하나 = 증거(doctor.Doctor.evidence()의 dict)를 읽는 작은 함수 하나 = 페이지 하나.

torch를 가져오지 않으므로 합성한 증거로도 돌려 볼 수 있습니다(CUDA 규칙을 CPU에서 시험하는 방법).
규칙은 Check를 돌려줍니다: 찾은 것(findings), 또는 확인했고 괜찮다는 한 줄(fine), 또는 이 작업에서
볼 수 없었던 이유(skipped).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from torchdoctor.catalog import BY_KEY, NOT_RUN_ON_GPU
from torchdoctor.words import format_seconds

DATA_SHARE = 0.10  # 다음 배치를 기다린 몫이 이보다 크면 알립니다
FP32_MATMUL_SHARE = 0.5  # fp32 행렬 곱이 연산 시간에서 이보다 크면 팁 6
TF32_MATMUL_SHARE = 0.3
LAUNCH_OPS = 200  # 스텝당 연산 수
LAUNCH_MEDIAN_S = 20e-6  # 연산 하나의 GPU 시간 중앙값
LAUNCH_BUSY = 0.5  # GPU가 일한 몫
LAUNCH_SHORT_SHARE = 0.5  # 프로파일러 한 스텝: 20 µs보다 짧은 커널의 몫이 이보다 크면 "짧다"
NUMERICS_NOTE = " 수치가 바뀌는 팁이므로 속도와 함께 손실도 확인해야 합니다."


@dataclass
class Check:
    findings: list[dict] = field(default_factory=list)
    fine: str = ""
    skipped: str = ""


def finding(
    key: str, message: str, *, file=None, line=None, share=None, evidence=None, cuda_path=False
) -> dict:
    """cuda_path: CUDA에서만 도는 경로(GPU 시계, 동기화 경고)로 찾은 것. CUDA 규칙처럼 GPU에서
    아직 돌려 보지 않았다고 적습니다."""
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
        "unverified": NOT_RUN_ON_GPU if rule.cuda_only or cuda_path else None,
    }


def percent(share: float) -> str:
    return f"{share:.0%}"


def host_data_share(ev: dict) -> float | None:
    """시간 창에서 스텝 시간 중 다음 배치를 기다린 몫(호스트 시계)."""
    total = sum(ev.get("step_s") or [])
    if total <= 0:
        return None
    return sum(ev.get("data_s") or []) / total


def clocked_share(ev: dict) -> tuple[float | None, str]:
    """다음 배치를 기다린 몫과 그 몫을 잰 시계("gpu" 또는 "host").

    CUDA에서 이벤트로 잰 창이 있으면 GPU 시계를 씁니다: 호스트가 배치를 기다린 시간 가운데 GPU가
    실제로 쉰 시간만 셉니다(GPU가 앞 스텝의 일을 하는 동안 기다린 것은 비용이 아닙니다)."""
    if on_cuda(ev):
        total = sum(ev.get("gpu_step_s") or [])
        if total > 0:
            return sum(ev.get("gpu_data_s") or []) / total, "gpu"
    return host_data_share(ev), "host"


def data_share(ev: dict) -> float | None:
    """시간 창에서 스텝 시간 중 다음 배치를 기다린 몫(CUDA에서 잰 것이 있으면 GPU 시계)."""
    return clocked_share(ev)[0]


CLOCK_LABEL = {"gpu": "GPU 시계", "host": "호스트 시계"}
CLOCK_NOTE = {
    "gpu": " 이 몫은 GPU 시계(CUDA 이벤트)로 잰 것으로, 배치를 기다리느라 GPU가 쉰 시간입니다.",
    "host": " 이 몫은 호스트 시계로 잰 것이라 GPU가 실제로 쉰 시간보다 클 수 있습니다.",
}


def clock_evidence(ev: dict, clock: str) -> dict:
    """CUDA에서만: 몫을 잰 시계와 호스트 시계의 몫(둘을 견주어 볼 수 있게)."""
    if not on_cuda(ev):
        return {}
    host = host_data_share(ev)
    return {"clock": clock, "host_data_share": None if host is None else round(host, 4)}


def compute_share(ev: dict) -> float:
    share = data_share(ev)
    return 1.0 if share is None else 1.0 - share


def on_cuda(ev: dict) -> bool:
    return ev.get("device") == "cuda"


# ----- 데이터 -----
def _data_wait(ev: dict, with_workers: bool) -> Check:
    loader, (share, clock) = ev.get("loader"), clocked_share(ev)
    if loader is None:
        return Check(skipped="시간 창에서 DataLoader로 배치를 읽지 않았습니다")
    if share is None:
        return Check(skipped="시간 창에 이르지 못했습니다")
    if (loader["num_workers"] > 0) != with_workers:
        workers = loader["num_workers"]
        return Check(fine=f"로더의 워커가 {workers}개라 이 규칙의 경우가 아닙니다")
    if share < DATA_SHARE:
        label = f", {CLOCK_LABEL[clock]}" if on_cuda(ev) else ""
        return Check(
            fine=f"다음 배치를 기다린 몫 {percent(share)} (기준 {percent(DATA_SHARE)} 미만{label})"
        )
    return Check([_data_wait_finding(ev, loader, share, clock, with_workers)])


def _data_wait_finding(ev: dict, loader: dict, share: float, clock: str, with_workers: bool):
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
    if on_cuda(ev):
        message += CLOCK_NOTE[clock]
    evidence = {"data_share": round(share, 4), "num_workers": workers}
    return finding(
        key,
        message,
        file=loader["file"],
        line=loader["line"],
        share=share,
        evidence=evidence | clock_evidence(ev, clock),
        cuda_path=clock == "gpu",
    )


def data_wait(ev: dict) -> Check:
    return _data_wait(ev, with_workers=False)


def data_wait_workers(ev: dict) -> Check:
    return _data_wait(ev, with_workers=True)


def pin_memory(ev: dict) -> Check:
    loader, (share, clock) = ev.get("loader"), clocked_share(ev)
    if loader is None or share is None:
        return Check(skipped="시간 창에서 DataLoader로 배치를 읽지 않았습니다")
    if loader["pin_memory"]:
        return Check(fine="로더가 `pin_memory=True`입니다")
    # 프로파일러 한 스텝(CUDA): 배치가 고정되지 않은 메모리에서 오는지 직접 봅니다
    pageable = (ev.get("profile") or {}).get("pageable_htod")
    if pageable is not None and pageable["count"] == 0:
        return Check(
            fine="프로파일러로 기록한 한 스텝에 고정되지 않은 메모리에서 온 호스트→장치 복사가"
            " 없습니다"
        )
    if share < DATA_SHARE:
        return Check(
            fine=f"다음 배치를 기다린 몫 {percent(share)}({CLOCK_LABEL[clock]}):"
            " 복사가 병목이 아닙니다"
        )
    message = (
        "CUDA로 학습하는데 로더에 `pin_memory=True`가 없고,"
        f" 스텝의 {percent(share)}를 배치를 기다리며"
        " 보냅니다."
    )
    evidence = {"data_share": round(share, 4)} | clock_evidence(ev, clock)
    if pageable is not None:
        message += (
            " 프로파일러로 기록한 한 스텝에서 고정되지 않은 메모리에서 온 호스트→장치 복사가"
            f" {pageable['count']}번({format_seconds(pageable['seconds'])}) 있었습니다."
        )
        evidence |= {"pageable_htod": pageable["count"], "pageable_s": pageable["seconds"]}
    message += (
        " 고정된 메모리(pinned memory)의 배치는 `.to(device, non_blocking=True)`로 계산과"
        " 겹쳐 복사할 수 있습니다." + CLOCK_NOTE[clock]
    )
    return Check(
        [
            finding(
                "unpinned-batches",
                message,
                file=loader["file"],
                line=loader["line"],
                share=share,
                evidence=evidence,
            )
        ]
    )


# ----- 호스트와 장치 -----
SYNC_WARNED_PER_STEP = 1.0  # 동기화 경고로만 본 줄: 탐침 스텝마다 평균 한 번 이상이면 알립니다


def host_sync(ev: dict) -> Check:
    if not ev.get("call_steps"):
        return Check(skipped="호출 탐침 스텝에 이르지 못했습니다")
    rows, warned = ev.get("syncs") or [], warned_syncs(ev)
    if not rows and not warned:
        library = ev.get("library_syncs_per_step") or 0
        extra = f" (라이브러리 안에서 스텝당 {library:g}번)" if library else ""
        if on_cuda(ev) and ev.get("cuda_syncs") is not None:
            extra += ', `set_sync_debug_mode("warn")`가 스텝마다 알린 동기화도 없음'
        return Check(
            fine=f"탐침 스텝 {ev['call_steps']}개에서 스텝마다 부른 동기화 호출 없음{extra}"
        )
    findings = [_sync_call_finding(ev, row) for row in rows]
    return Check(findings + [_sync_warning_finding(row) for row in warned])


def warned_syncs(ev: dict) -> list[dict]:
    """CUDA: 동기화 경고로 본 줄 가운데 호출 탐침이 이름으로 찾지 못한 줄."""
    if not on_cuda(ev):
        return []
    seen = {(row["file"], row["line"]) for row in ev.get("syncs") or []}
    return [
        row
        for row in ev.get("cuda_syncs") or []
        if row["per_step"] >= SYNC_WARNED_PER_STEP and (row["file"], row["line"]) not in seen
    ]


def waited_text(seconds: float | None) -> str:
    """CUDA에서 잰 것만: 탐침 스텝에서 그 호출 안에서 호스트가 보낸(GPU를 기다린) 시간."""
    if seconds is None:
        return ""
    return (
        " 탐침 스텝에서 이 호출 안에서 보낸 호스트 시간은"
        f" 스텝마다 {format_seconds(seconds)}입니다."
    )


def _sync_call_finding(ev: dict, row: dict) -> dict:
    if on_cuda(ev):
        why = "호스트가 GPU의 일이 끝나기를 기다리는(동기화하는) 호출입니다."
    else:
        why = (
            "CPU에서는 기다림이 없지만 GPU에서라면 호스트가 장치를 기다리는(동기화하는) 호출입니다."
        )
    seconds = row.get("seconds_per_step")
    message = (
        f"스텝마다 {row['what']} 호출이 {row['per_step']:g}번 있습니다. {why}"
        f"{waited_text(seconds)}"
        " 값을 장치에 모아 두었다가 가끔 한 번에 읽으세요."
    )
    evidence = {"per_step": row["per_step"], "call": row["what"]}
    if "seconds_per_step" in row:
        evidence["seconds_per_step"] = seconds
    return finding(
        "host-sync",
        message,
        file=row["file"],
        line=row["line"],
        evidence=evidence,
        cuda_path="seconds_per_step" in row,
    )


def _sync_warning_finding(row: dict) -> dict:
    seconds = row.get("seconds_per_step")
    message = (
        f'`set_sync_debug_mode("warn")`가 이 줄에서 스텝마다 {row["per_step"]:g}번 동기화를'
        " 알렸습니다. 호스트가 GPU의 일이 끝나기를 기다립니다. 호출 탐침이 이름으로 알아보지 못한"
        " 연산으로, 불리언 마스크 인덱싱이나 `torch.nonzero`처럼 결과의 크기를 GPU의 값으로 정하는"
        f" 연산일 수 있습니다.{waited_text(seconds)}"
        " 값을 장치에 모아 두었다가 가끔 한 번에 읽거나 크기가 정해진 연산(`torch.where`)으로"
        " 바꾸세요."
    )
    evidence = {
        "per_step": row["per_step"],
        "call": None,
        "source": "set_sync_debug_mode",
        "seconds_per_step": seconds,
    }
    return finding(
        "host-sync",
        message,
        file=row["file"],
        line=row["line"],
        evidence=evidence,
        cuda_path=True,
    )


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
    if not rows and not ev.get("steps_seen"):
        # 스텝 전에 멈춘 작업에서 "없음"은 아무것도 보지 못했다는 뜻일 뿐입니다.
        return Check(skipped="옵티마이저 스텝을 보지 못했습니다")
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
def launch_signals(ev: dict, ops: dict, step: float) -> dict:
    """GPU가 일한 몫과 커널이 짧은지. 프로파일러 한 스텝이 있으면 그것으로(커널이 실제로 돈
    시간표), 없으면 연산 탐침의 이벤트로 봅니다."""
    profile = ev.get("profile") or {}
    idle = profile.get("idle_share")
    short = (profile.get("kernels") or {}).get("short_share")
    busy = 1.0 - idle if idle is not None else ops["op_s"] / step
    if short is not None:
        is_short = short > LAUNCH_SHORT_SHARE
        how = f"프로파일러로 기록한 한 스텝에서 커널의 {percent(short)}가 20 µs보다 짧아"
    else:
        is_short = ops["median_op_s"] < LAUNCH_MEDIAN_S
        how = f"하나의 GPU 시간 중앙값이 {ops['median_op_s'] * 1e6:.0f} µs라"
    return {"busy": busy, "short": is_short, "how": how, "idle_share": idle, "short_share": short}


def launch_bound(ev: dict) -> Check:
    if not on_cuda(ev):
        return Check(skipped="CUDA에서만 봅니다")
    ops, step = ev.get("ops"), ev.get("op_step_s")
    if not ops or not step or ops.get("median_op_s") is None:
        return Check(skipped="연산 탐침 스텝에 이르지 못했습니다")
    signals = launch_signals(ev, ops, step)
    busy = signals["busy"]
    if ops["ops"] <= LAUNCH_OPS or not signals["short"] or busy >= LAUNCH_BUSY:
        source = " (프로파일러 한 스텝)" if signals["idle_share"] is not None else ""
        return Check(fine=f"연산 {ops['ops']}개, GPU가 일한 몫 {percent(min(busy, 1.0))}{source}")
    message = (
        f"스텝당 연산이 {ops['ops']}개이고 {signals['how']},"
        f" GPU가 스텝의 {percent(busy)}만 일합니다. 커널을"
        " 띄우는 호스트가 병목입니다: `torch.compile`로 커널을 합치거나"
        " CUDA 그래프(cuda-graphs 페이지)를"
        " 쓰세요."
    )
    evidence = {k: signals[k] for k in ("idle_share", "short_share") if signals[k] is not None}
    return Check([finding("launch-bound", message, share=1.0 - busy, evidence=evidence)])


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
