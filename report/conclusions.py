"""표 아래의 결론 문장: 숫자는 모두 결과에서 계산하고, 판정은 구간으로만 내립니다.

결론의 종류는 레지스트리(guide/pages.toml의 conclusion)가 정하고, 종류마다 함수 하나가 문장을
씁니다(WRITERS). 조사는 받침에 따라 고르고(formatting.josa), 영어나 코드로 끝나는 이름 뒤에는 받침과
상관없는 조사(의, 보다, 에서)만 붙도록 문장을 짭니다. "이(가)" 같은 표기는 쓰지 않습니다.
"""

from __future__ import annotations

from guide import registry
from report import analysis, interaction
from report.analysis import Group
from report.formatting import format_number, josa, quoted
from torchdoctor.words import (
    WORDS,
    cumulative_text,
    format_ratio,
    format_seconds,
    interval_bounds,
    level_of,
    ratio_text,
)

CPU_BF16_FLAGS = {"avx512_bf16": "AVX-512 BF16", "amx_bf16": "AMX"}
CPU_FP16_FLAGS = ("avx512_fp16", "amx_fp16")
NO_MECHANISM = "이 장치에서는 바뀌는 것 없음"
CUDA_ONLY = "이 기능은 CUDA에만 있어 이 장치에서는 바뀌는 것이 없습니다"
CEILING_COLUMN = "위 표의 ‘천장 대비’ 열이 이것과 비교한 값입니다."


def _speed_sentence(row: analysis.Row, baseline: analysis.Row) -> str:
    """두 변형의 속도를 판정과 함께 한 문장으로. 숫자와 판정은 모두 구간에서 옵니다."""
    ratio, pair = row.ratio, f"{quoted(row.label)} 대 {quoted(baseline.label)}"
    bounds = f"{level_of(ratio)} 구간 {interval_bounds(ratio.low, ratio.high)}배"
    if ratio.verdict == "same":
        return f"{pair}: 속도 차이가 5%보다 작습니다({bounds}, 차이 없음)."
    if ratio.verdict == "inconclusive":
        if ratio.side is None:
            return f"{pair}: 구간이 넓어 어느 쪽이 빠른지 말할 수 없습니다({bounds}, 판정 보류)."
        lean = "빠른" if ratio.side == "faster" else "느린"
        return (
            f"{pair}: {lean} 쪽이지만 구간이 ±5% 띠의 경계에 걸쳐, 차이가 5%를 넘는다고까지는 "
            f"말할 수 없습니다({bounds}, 판정 보류)."
        )
    word = WORDS[ratio.verdict]
    return (
        f"{quoted(row.label)}의 속도는 {quoted(baseline.label)}의 "
        f"{format_ratio(ratio.median)}입니다({bounds}, {word})."
    )


def speedup(group: Group, env: dict) -> str:
    baseline, best = group.baseline, group.recommended
    if not (baseline and best and best.ratio):
        return "이 묶음에는 기준과 권장 방식이 함께 있지 않아 배수를 계산하지 않았습니다."
    return _speed_sentence(best, baseline)


def ceiling(group: Group, env: dict) -> str:
    """천장 묶음의 설명. '천장 대비' 열이 있는 표가 없으면 그 열을 말하지 않습니다."""
    text = "천장은 같은 실행에서 잰(또는 계산한) 도달 가능한 최대 속도입니다."
    # 표는 메커니즘이 있는 장치에서만 '천장 대비' 열을 그립니다(hooks/group_table.py).
    shown = group.page.applies_to(env["kind"], env["count"])
    others = [g for g in group.siblings.values() if g is not group]
    if shown and any(row.ceiling_percent is not None for g in [group, *others] for row in g.rows):
        text += " " + CEILING_COLUMN
    return text


def saturation(group: Group, env: dict) -> str:
    timed = [row for row in group.rows if row.ratio or row.role == "baseline"]
    rated = [row for row in timed if row.metric("samples_per_s")]
    if len(rated) < 2:
        return speedup(group, env)
    best = max(rated, key=lambda row: row.metric("samples_per_s"))
    best_low = best.ratio.low if best.ratio else 1.0
    # 가장 빠른 것과 구간이 겹치면(더 빠르다고 말할 수 없으면) 충분한 워커 수로 봅니다.
    enough = min(
        (row for row in rated if (row.ratio.high if row.ratio else 1.0) >= best_low),
        key=lambda row: row.entry["params"].get("num_workers", 0),
    )
    workers, cores = enough.entry["params"].get("num_workers", 0), env["usable_cores"]
    text = (
        f"처리량은 워커 {workers}개에서 더 오르지 않습니다(더 많은 워커와 구간이 겹칩니다). "
        f"쓸 수 있는 코어가 {cores}개라서, 그 이상의 워커는 같은 코어를 나눠 쓸 뿐입니다."
    )
    if enough.ceiling_percent is not None:
        text += f" 이때 천장의 {enough.ceiling_percent:.0f}%입니다."
    gpus = env["count"]
    rule = f" 원문의 규칙(4 × GPU 수)은 이 장치에서 워커 {4 * gpus}개를 제안합니다"
    return text + rule + (": GPU가 없으니 규칙이 답을 주지 못합니다." if gpus == 0 else ".")


def bf16_isa(group: Group, env: dict) -> str:
    if env["kind"] != "cpu":
        return speedup(group, env)
    fp32, bf16 = group.baseline, group.recommended
    if not (fp32 and bf16 and bf16.ratio):
        return speedup(group, env)
    features = [name for flag, name in CPU_BF16_FLAGS.items() if flag in env["cpu_flags"]]
    hardware = (
        # "BF16와"처럼 영문 뒤에 받침을 따지는 조사를 붙이지 않으려고 쉼표로 잇습니다.
        f"이 CPU에는 {', '.join(features)} 명령이 있어 bf16 행렬 곱을 하드웨어로 계산합니다."
        if features
        else "이 CPU에는 AVX-512 BF16도 AMX도 없어 bf16을 fp32로 바꿔 계산합니다."
    )
    text = f"{hardware} {_speed_sentence(bf16, fp32)}"
    fp16 = group.row("step-fp16")
    if fp16 and fp16.ratio and not set(CPU_FP16_FLAGS) & set(env["cpu_flags"]):
        text += (
            " fp16 autocast는 이 CPU에 fp16 행렬 곱 하드웨어(AVX512-FP16·AMX-FP16)가 없어 느린 "
            "경로로 계산됩니다. GPU의 fp16과는 관계없는 숫자입니다."
        )
    return text


def _with_ratio(rows: list[analysis.Row], verdict: str, lead: str = "") -> list[str]:
    """판정이 verdict인 행마다 '이름(배수)'. 도구의 비용과 하나씩 빼기가 함께 씁니다.

    lead("빼면 ")는 괄호 안의 배수가 무엇을 한 배수인지 밝힙니다.
    """
    return [f"{quoted(r.label)}({lead}{ratio_text(r.ratio)})" for r in rows if r.verdict == verdict]


def overhead(group: Group, env: dict) -> str:
    others = [row for row in group.rows if row.role != "baseline" and row.ratio]
    if not others:
        return speedup(group, env)
    same = [quoted(row.label) for row in others if row.verdict == "same"]
    slower = [f"{quoted(r.label)} {ratio_text(r.ratio)}" for r in others if r.verdict == "slower"]
    faster = [quoted(row.label) for row in others if row.verdict == "faster"]
    held = _with_ratio(others, "inconclusive")
    parts = []
    if slower:
        worst = group.costliest
        parts.append(
            f"켜 두기만 해도 같은 일이 느려진 것: {', '.join(slower)}. 가장 비싼 것은 "
            f"{quoted(worst.label)}입니다. 문제를 찾을 때만 켜고, 학습할 때는 끄세요."
        )
    if held:
        parts.append(f"비용이 있는지 판정을 보류한 것: {', '.join(held)}.")
    if same:
        parts.append(f"기준과의 차이가 5%보다 작은 것: {', '.join(same)}.")
    if faster:  # 도구는 일을 더할 뿐 덜지 않습니다.
        names = ", ".join(faster)
        parts.append(
            f"도구가 일을 덜 수는 없으므로, 기준보다 빠르게 나온 {names}의 값은 흔들림입니다."
        )
    return " ".join(parts)


def tradeoff(group: Group, env: dict) -> str:
    # 시간을 내주는 기법이라 "권장"이 아니라 "비교"일 수 있습니다(Group.headline).
    baseline, chosen = group.baseline, group.headline
    if not (baseline and chosen and chosen.ratio):
        return speedup(group, env)
    for name in ("saved_activation_mib", "peak_memory_mib", "worker_memory_growth_mib"):
        before, after = baseline.metric(name), chosen.metric(name)
        if before is not None and after is not None:
            break
    else:
        return speedup(group, env)
    label, unit, _ = analysis.METRIC_DISPLAY[name]
    memory = f"{josa(label, '은/는')} {format_number(before)} → {format_number(after)} {unit}"
    if before > 0 and after != before:
        change = abs(1 - after / before) * 100
        memory += f"로 {change:.0f}% {'줄었' if after < before else '늘었'}습니다"
    else:
        memory += "로 같습니다"
    speed = ratio_text(chosen.ratio)
    return f"{quoted(chosen.label)}의 속도는 기준 대비 {speed}이고, {memory}."


def compile_time(group: Group, env: dict) -> str:
    rows = [row for row in group.rows if row.metric("compile_s") is not None]
    if len(rows) < 2:
        return speedup(group, env)
    listed = ", ".join(f"{quoted(r.label)} {format_number(r.metric('compile_s'))}초" for r in rows)
    return (
        f"첫 호출에 든 시간: {listed}. 한 번씩 잰 값이라 구간이 없습니다. 캐시가 채워진 폴더에서도 "
        "새 프로세스는 모듈을 읽고 캐시를 찾는 데 시간이 듭니다."
    )


def waterfall(group: Group, env: dict) -> str:
    stages = [row for row in group.rows if row.role != "ceiling" and not row.computed]
    final = stages[-1] if len(stages) > 1 else None
    if not (final and final.ratio):
        return speedup(group, env)
    cuda_only = set(group.page.cuda_only) if env["kind"] != "cuda" else set()
    judged = [row for row in stages[1:] if row.previous and row.entry["variant"] not in cuda_only]
    helped = [quoted(row.label) for row in judged if row.previous.verdict == "faster"]
    hurt = [quoted(row.label) for row in judged if row.previous.verdict == "slower"]
    held = [quoted(row.label) for row in judged if row.previous.verdict == "inconclusive"]
    # 단계의 판정은 앞 단계 대비 비율로만 내립니다: 누적 배수는 앞 단계들의 곱이라 한 단계가
    # 흔들리면 뒤의 모든 누적 판정이 함께 움직이기 때문입니다.
    text = f"마지막 단계의 속도는 기준의 {cumulative_text(final.ratio)}입니다."
    if helped:
        text += f" 앞 단계보다 빨라진 단계: {', '.join(helped)}."
    if hurt:
        text += f" 앞 단계보다 느려진 단계: {', '.join(hurt)}."
    if held:
        text += f" 앞 단계와 견준 판정을 보류한 단계: {', '.join(held)}."
    idle = [quoted(row.label) for row in stages if row.entry["variant"] in cuda_only]
    if idle:  # 페이지에 CUDA 전용 변형이 있어도 이 폭포에 없으면 아무것도 쓰지 않습니다
        text += f" {', '.join(idle)}: {CUDA_ONLY}."
    if final.ceiling_percent is not None:
        name = group.spec.ceiling_label
        text += f" 마지막 단계는 {name} {final.ceiling_percent:.0f}%입니다."
    return text


def leave_one_out(group: Group, env: dict) -> str:
    full = group.baseline
    cuda_only = set(group.page.cuda_only) if env["kind"] != "cuda" else set()
    removed = [row for row in group.rows if row.ratio and row is not full]
    if not (full and removed):
        return speedup(group, env)
    judged = sorted(
        (row for row in removed if row.entry["variant"] not in cuda_only),
        key=lambda row: row.ratio.median,
    )
    needed = _with_ratio(judged, "slower", "빼면 ")
    # 빼서 빨라지면 그 기법이 이 장치에서는 손해입니다(bf16 명령이 없는 CPU의 bf16 등).
    harmful = _with_ratio(judged, "faster", "빼면 ")
    free = [quoted(row.label) for row in judged if row.verdict == "same"]
    held = _with_ratio(judged, "inconclusive", "빼면 ")
    text = f"모든 기법을 쓴 {quoted(full.label)}에서 하나씩 뺐을 때"
    text += f" 느려지는 것: {', '.join(needed)}." if needed else " 느려지는 것이 없습니다."
    if harmful:
        text += f" 빼면 오히려 빨라지는 것(이 장치에서는 손해): {', '.join(reversed(harmful))}."
    if free:
        text += f" 빼도 차이가 5%보다 작은 것: {', '.join(free)}."
    if held:
        text += f" 판정을 보류한 것: {', '.join(held)}."
    idle = [quoted(r.label) for r in removed if r.entry["variant"] in cuda_only]
    if idle:
        text += f" {', '.join(idle)}: {CUDA_ONLY}."
    return text + interaction.sentence(group, group.siblings.get("waterfall"), cuda_only)


WRITERS = {
    "speedup": speedup,
    "leave-one-out": leave_one_out,
    "saturation": saturation,
    "bf16-isa": bf16_isa,
    "overhead": overhead,
    "ceiling": ceiling,
    "waterfall": waterfall,
    "tradeoff": tradeoff,
    "compile-time": compile_time,
}
assert tuple(WRITERS) == registry.CONCLUSIONS, "결론 종류는 registry.CONCLUSIONS와 같아야 합니다"


def saving_text(group: Group) -> str:
    """기준보다 빨라진 권장 방식이 params 값 하나(예: 에폭)당 아끼는 시간: "에폭마다 약 61.8 ms"."""
    spec, baseline, best = group.spec, group.baseline, group.recommended
    if not (spec.saving_param and baseline and best and best.verdict == "faster"):
        return ""
    count = best.entry["params"].get(spec.saving_param)
    if not isinstance(count, int | float) or count <= 0:
        return ""
    saved = (baseline.entry["median_s"] - best.entry["median_s"]) / count
    return f"{spec.saving_unit}마다 약 {format_seconds(saved)}"


def saving_sentence(group: Group) -> str:
    text = saving_text(group)
    return f" {text}를 아낍니다." if text else ""


def conclusion(group: Group, env: dict) -> str:
    """표 아래에 붙는 결론 한두 문장. env는 결과 파일의 device 부분입니다."""
    text = WRITERS[group.spec.conclusion](group, env) + saving_sentence(group)
    return f"{text} {group.spec.note}" if group.spec.note else text


def ratio_cell(row: analysis.Row, env: dict, page: registry.Page) -> str:
    """표의 "기준 대비" 칸: 구간과 판정. CUDA에만 있는 메커니즘은 바뀌는 것 없음."""
    if row.role == "baseline":
        return "기준"
    if env["kind"] != "cuda" and row.entry["variant"] in page.cuda_only:
        return NO_MECHANISM
    if not row.ratio:
        return "—"
    # 폭포의 누적 배수는 판정하지 않습니다: 판정은 앞 단계 대비 칸이 합니다.
    return cumulative_text(row.ratio) if row.previous else ratio_text(row.ratio)


def previous_cell(row: analysis.Row, env: dict, page: registry.Page) -> str:
    if env["kind"] != "cuda" and row.entry["variant"] in page.cuda_only:
        return NO_MECHANISM
    return ratio_text(row.previous) if row.previous else "—"
