"""결과 문서(dict)에서 비교와 결론을 계산합니다: 기준 대비 속도, 헤드라인, 천장 대비, 결론 문장.

`pytest --benchmark`의 한국어 요약과 MkDocs 훅(hooks/results.py)이 같은 계산과 같은 문장을 쓰도록
여기에 모았습니다. 값은 저장하지 않고 결과 파일의 중앙값에서 매번 다시 계산합니다. 변형과 묶음의
한국어 이름은 guide/pages.toml(레지스트리)에서 가져옵니다.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guide import registry

# 결과의 metrics를 보여 주는 방법: (이름, 단위, 클수록 좋은 속도인지). 속도만 천장과 비교합니다.
METRIC_DISPLAY = {
    "gb_per_s": ("대역폭", "GB/s", True),
    "tflop_per_s": ("연산 속도", "TFLOP/s", True),
    "samples_per_s": ("처리량", "샘플/초", True),
    "steps_per_s": ("처리량", "스텝/초", True),
    "tokens_per_s": ("처리량", "토큰/초", True),
    "peak_memory_mib": ("최대 메모리", "MiB", False),
    "saved_activation_mib": ("저장한 활성값", "MiB", False),
    "worker_memory_growth_mib": ("워커 메모리 증가", "MiB", False),
    "syncs_per_step": ("스텝당 동기화", "회", False),
    "allreduces_per_step": ("스텝당 all-reduce", "회", False),
    "graph_breaks": ("그래프 끊김", "회", False),
    "recompiles": ("재컴파일", "회", False),
    "compile_s": ("컴파일 시간", "초", False),
    "precompute_s": ("미리 계산한 시간(한 번)", "초", False),
    "loss": ("마지막 손실", "", False),
}
# 기준과 비교할 때 쓰는 처리량(앞의 것 먼저). 호출 한 번의 일이 변형마다 다를 때 중앙값 대신 씁니다.
THROUGHPUT_METRICS = ("tokens_per_s", "samples_per_s", "steps_per_s")
# TFLOP/s는 호출 한 번의 연산이 이보다 적으면 보여 주지 않습니다. 작은 연산에서는 고정 비용이
# 시간을 정해서, 연산 속도나 천장 대비 비율이 아무것도 말해 주지 않기 때문입니다.
MIN_FLOPS_PER_CALL = 1e9
ROLE_LABELS = {
    "baseline": "기준",
    "recommended": "권장 방식",
    "other": "비교",
    "ceiling": "천장",
}
CPU_BF16_FLAGS = {"avx512_bf16": "AVX-512 BF16", "amx_bf16": "AMX"}


def format_seconds(seconds: float) -> str:
    """사람이 읽기 좋은 시간 단위로 바꿉니다(유효숫자 세 자리)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_number(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_metric(name: str, value: float) -> str:
    _, unit, _ = METRIC_DISPLAY[name]
    return f"{format_number(value)} {unit}".strip()


def format_ratio(ratio: float) -> str:
    """배수. 1보다 작으면 어느 페이지에서나 "(느려짐)"을 붙입니다."""
    text = f"{ratio:.2f}배" if ratio < 10 else f"{ratio:.1f}배"
    return text if ratio >= 1 else f"{text}(느려짐)"


NO_DIFFERENCE = "차이 없음(측정 오차 범위 안)"


@dataclass
class Row:
    """표의 한 줄: 측정 하나와, 같은 묶음의 기준 및 천장에 대한 비교입니다."""

    entry: dict
    label: str
    relative_speed: float | None = None  # 기준 중앙값 / 이 중앙값 (1보다 크면 빠름)
    ceiling_percent: float | None = None
    within_noise: bool = False  # 기준과의 차이가 측정 오차 범위(IQR) 안인지

    @property
    def role(self) -> str:
        return self.entry["role"]

    @property
    def computed(self) -> bool:
        return self.entry["computed"]

    def shown_metrics(self) -> dict[str, float]:
        """표에 보일 값: 호출 한 번의 연산이 너무 작으면 TFLOP/s는 뺍니다."""
        metrics = dict(self.entry["metrics"])
        if "tflop_per_s" in metrics and not self.computed:
            if metrics["tflop_per_s"] * 1e12 * self.entry["median_s"] < MIN_FLOPS_PER_CALL:
                del metrics["tflop_per_s"]
        return metrics

    def relative_text(self) -> str | None:
        if self.relative_speed is None:
            return None
        return NO_DIFFERENCE if self.within_noise else format_ratio(self.relative_speed)


@dataclass
class Group:
    page: registry.Page
    key: str
    rows: list[Row] = field(default_factory=list)

    @property
    def params(self) -> dict:
        merged: dict = {}
        for row in self.rows:
            merged |= row.entry["params"]
        return merged

    @property
    def title(self) -> str:
        return self.page.group_title(self.key, self.params)

    @property
    def spec(self) -> registry.Group:
        return self.page.group(self.key)

    def work(self) -> str:
        return self.page.group_work(self.key, self.params)

    def with_role(self, role: str) -> Row | None:
        return next((row for row in self.rows if row.role == role), None)

    @property
    def recommended(self) -> Row | None:
        return self.with_role("recommended")

    @property
    def speedup(self) -> float | None:
        """묶음의 헤드라인: 기준 대비 권장 방식의 속도 향상입니다."""
        row = self.recommended
        return row.relative_speed if row else None

    @property
    def within_noise(self) -> bool:
        row = self.recommended
        return bool(row and row.within_noise)

    @property
    def costliest(self) -> Row | None:
        """기준보다 측정 오차 범위를 넘게 느린 변형 가운데 가장 느린 것(도구를 켠 비용 묶음)."""
        slower = [
            row
            for row in self.rows
            if row.role != "baseline"
            and row.relative_speed is not None
            and not row.within_noise
            and row.relative_speed < 1
        ]
        return min(slower, key=lambda row: row.relative_speed, default=None)

    def headline_text(self) -> str | None:
        row = self.recommended
        return row.relative_text() if row else None


def _time_per_work(entry: dict, metric: str | None) -> tuple[float, float]:
    """(중앙값, IQR)을 일 하나(토큰, 샘플, 스텝)당 시간으로 나눕니다.

    metric이 없으면 호출 한 번당 그대로 둡니다.
    """
    rate = entry["metrics"].get(metric, 0.0) if metric else 0.0
    work = rate * entry["median_s"]  # 호출 한 번이 한 일의 양
    if work <= 0:
        return entry["median_s"], entry["iqr_s"]
    return entry["median_s"] / work, entry["iqr_s"] / work


def compare(baseline: dict, entry: dict) -> tuple[float, bool]:
    """기준 대비 속도(1보다 크면 빠름)와, 그 차이가 측정 오차 범위(IQR) 안인지를 돌려줍니다.

    변형마다 호출 한 번의 일이 다를 수 있어(전부 합치면의 마이크로 배치) 둘 다 처리량을 가졌다면
    일 하나당 시간으로 비교합니다. 차이가 두 IQR 가운데 큰 것보다 작으면 구별할 수 없습니다.
    """
    metric = next(
        (m for m in THROUGHPUT_METRICS if m in baseline["metrics"] and m in entry["metrics"]), None
    )
    (base, base_iqr), (this, this_iqr) = (
        _time_per_work(baseline, metric),
        _time_per_work(entry, metric),
    )
    return base / this, abs(base - this) <= max(base_iqr, this_iqr)


def ceiling_percent(entry: dict, ceiling: dict) -> float | None:
    """두 측정이 같은 단위의 속도를 가졌다면, 천장 대비 비율(%)을 돌려줍니다."""
    for name, (_, _, rate) in METRIC_DISPLAY.items():
        if rate and name in entry["metrics"] and name in ceiling["metrics"]:
            if ceiling["metrics"][name] > 0:
                return 100.0 * entry["metrics"][name] / ceiling["metrics"][name]
    return None


def entries_for(doc: dict, page_id: str) -> list[dict]:
    return [entry for entry in doc["benchmarks"] if entry["page"] == page_id]


def groups_for(doc: dict, page_id: str) -> list[Group]:
    """페이지의 측정을 묶음별로 모으고, 묶음 안의 기준과 천장에 대해 비교합니다."""
    page = registry.by_id(page_id)
    by_id = {entry["id"]: entry for entry in doc["benchmarks"]}
    groups: dict[str, Group] = {}
    for entry in entries_for(doc, page_id):
        label = page.variant_label(entry["variant"], entry["params"])
        group = groups.setdefault(entry["group"], Group(page, entry["group"]))
        group.rows.append(Row(entry, label))
    for group in groups.values():
        baseline = group.with_role("baseline")
        for row in group.rows:
            if baseline and row.role != "ceiling" and not row.computed:
                row.relative_speed, noise = compare(baseline.entry, row.entry)
                row.within_noise = row is not baseline and noise
            ceiling = by_id.get(row.entry["ceiling"] or "")
            if ceiling:
                percent = ceiling_percent(
                    {"metrics": row.shown_metrics()}, {"metrics": ceiling["metrics"]}
                )
                row.ceiling_percent = percent
    order = list(page.groups)
    return sorted(groups.values(), key=lambda g: order.index(g.key) if g.key in order else 99)


def group_by_key(doc: dict, page_id: str, key: str) -> Group | None:
    return next((g for g in groups_for(doc, page_id) if g.key == key), None)


def not_measured_for(doc: dict, page_id: str) -> list[tuple[str, str]]:
    """재지 않은 묶음과 이유: [(묶음 제목, 이유)]. 같은 것은 한 번만."""
    page = registry.by_id(page_id)
    seen: dict[tuple[str, str], None] = {}
    for item in doc["not_measured"]:
        if item["page"] == page_id:
            title = page.group_name(item["group"]) if item["group"] in page.groups else "측정"
            seen[(title, item["reason"])] = None
    return list(seen)


def measured_pages(doc: dict) -> list[str]:
    found = {e["page"] for e in doc["benchmarks"]} | {x["page"] for x in doc["not_measured"]}
    return [page.id for page in registry.load() if page.id in found]


def unknown_pages(doc: dict) -> list[str]:
    known = {page.id for page in registry.load()}
    found = {e["page"] for e in doc["benchmarks"]} | {x["page"] for x in doc["not_measured"]}
    return sorted(found - known)


# --- 결론 문장 ------------------------------------------------------------------------------


def conclusion(group: Group, env: dict) -> str:
    """표 아래에 붙는 결론 한 문장(또는 두 문장). 숫자는 모두 이 결과에서 계산합니다."""
    kind = group.spec.conclusion
    if kind == "ceiling":
        return (
            "천장은 같은 실행에서 잰(또는 계산한) 도달 가능한 최대 속도입니다. "
            "위 표의 ‘천장 대비’ 열이 이것과 비교한 값입니다."
        )
    if kind == "saturation":
        return _saturation(group, env)
    if kind == "bf16-isa" and env["device_kind"] == "cpu":
        return _bf16_on_cpu(group, env)
    if kind == "overhead":
        return _overhead(group)
    if kind == "waterfall":
        return _waterfall(group)
    if kind == "tradeoff":
        return _tradeoff(group)
    if kind == "compile-time":
        return _compile_time(group)
    return _speedup(group)


def _speedup(group: Group) -> str:
    baseline, best = group.with_role("baseline"), group.recommended
    if not (baseline and best and best.relative_speed):
        return "이 묶음에는 기준과 권장 방식이 함께 있지 않아 배수를 계산하지 않았습니다."
    if best.within_noise:
        return (
            f"차이 없음: ‘{best.label}’과(와) ‘{baseline.label}’의 중앙값 차이가 측정 오차 "
            "범위(IQR) 안이라, 이 장치에서는 두 방식이 다르다고 말할 수 없습니다."
        )
    if best.relative_speed >= 1:
        ratio = format_ratio(best.relative_speed)
        return f"‘{best.label}’이(가) ‘{baseline.label}’보다 {ratio} 빠릅니다."
    return (
        f"이 장치에서는 ‘{best.label}’이(가) ‘{baseline.label}’보다 느립니다: "
        f"{format_ratio(best.relative_speed)}."
    )


def _saturation(group: Group, env: dict) -> str:
    timed = [
        row for row in group.rows if row.relative_speed and "samples_per_s" in row.entry["metrics"]
    ]
    if not timed:
        return _speedup(group)
    best = max(row.entry["metrics"]["samples_per_s"] for row in timed)
    enough = min(
        (row for row in timed if row.entry["metrics"]["samples_per_s"] >= 0.95 * best),
        key=lambda row: row.entry["params"].get("num_workers", 0),
    )
    workers = enough.entry["params"].get("num_workers", 0)
    cores = env["usable_cores"]
    gpus = env["device_count"]
    text = (
        f"처리량은 워커 {workers}개에서 더 오르지 않습니다(가장 높은 값의 95% 이상). "
        f"쓸 수 있는 코어가 {cores}개라서, 그 이상의 워커는 같은 코어를 나눠 쓸 뿐입니다."
    )
    if enough.ceiling_percent is not None:
        text += f" 이때 천장의 {enough.ceiling_percent:.0f}%입니다."
    rule = 4 * gpus
    text += f" 원문의 규칙(4 × GPU 수)은 이 장치에서 워커 {rule}개를 제안합니다" + (
        ": GPU가 없으니 규칙이 답을 주지 못합니다." if gpus == 0 else "."
    )
    return text


def _bf16_on_cpu(group: Group, env: dict) -> str:
    fp32, bf16 = group.with_role("baseline"), group.recommended
    features = [name for flag, name in CPU_BF16_FLAGS.items() if flag in env.get("cpu_flags", [])]
    if not (fp32 and bf16 and bf16.relative_speed):
        return _speedup(group)
    if bf16.within_noise:
        result = f"bf16 autocast와 fp32는 {NO_DIFFERENCE}입니다"
    elif bf16.relative_speed >= 1:
        result = f"bf16 autocast가 fp32보다 {format_ratio(bf16.relative_speed)} 빠릅니다"
    else:
        result = f"bf16 autocast가 fp32보다 느립니다({format_ratio(bf16.relative_speed)})"
    if features:
        names = "와 ".join(features)
        return f"이 CPU는 {names}이(가) 있어 bf16 행렬 곱을 하드웨어로 계산합니다: {result}."
    return f"이 CPU는 AVX-512 BF16도 AMX도 없어 bf16을 fp32로 바꿔 계산합니다: {result}."


def _overhead(group: Group) -> str:
    others = [row for row in group.rows if row.role != "baseline" and row.relative_text()]
    if not others:
        return _speedup(group)
    costs = ", ".join(f"{row.label} {row.relative_text()}" for row in others)
    faster = [row for row in others if not row.within_noise and row.relative_speed > 1]
    worst = group.costliest
    if worst:
        text = (
            f"도구를 켜 두기만 해도 같은 학습이 이만큼 느려집니다: {costs}. 가장 비싼 것은 "
            f"‘{worst.label}’입니다. 문제를 찾을 때만 켜고, 학습할 때는 끄세요."
        )
    else:
        text = (
            "이 장치에서는 도구를 켜도 같은 학습이 측정 오차 범위를 넘게 느려지지 "
            f"않았습니다: {costs}."
        )
    if faster:
        # 프로파일러나 디버깅 도구는 일을 더할 뿐 덜지 않습니다. 기준보다 빠른 값은 흔들림입니다.
        names = ", ".join(f"‘{row.label}’" for row in faster)
        text += (
            f" 도구가 일을 덜 수는 없으므로, 기준보다 빠르게 나온 {names}은(는) 측정의 "
            "흔들림입니다."
        )
    return text


def _compile_time(group: Group) -> str:
    """컴파일 시간(계산값)끼리 비교합니다: 기준과 권장 방식의 compile_s."""
    baseline, chosen = group.with_role("baseline"), group.recommended
    times = [row.entry["metrics"].get("compile_s") if row else None for row in (baseline, chosen)]
    if None in times or not times[1]:
        return _speedup(group)
    return (
        f"‘{chosen.label}’의 첫 호출은 {format_number(times[1])}초로, "
        f"‘{baseline.label}’({format_number(times[0])}초)보다 {format_ratio(times[0] / times[1])} "
        "빠릅니다. 같은 코드를 다시 실행하는 두 번째 실행부터는 컴파일 대부분을 캐시에서 읽습니다."
    )


MEMORY_METRICS = ("saved_activation_mib", "peak_memory_mib", "worker_memory_growth_mib")


def _tradeoff(group: Group) -> str:
    """시간을 내주고 메모리를 얻는 기법(활성화 체크포인팅 등): 두 가지를 한 문장에 씁니다."""
    baseline, chosen = group.with_role("baseline"), group.recommended
    if not (baseline and chosen and chosen.relative_speed):
        return _speedup(group)
    name = next(
        (
            m
            for m in MEMORY_METRICS
            if m in baseline.entry["metrics"] and m in chosen.entry["metrics"]
        ),
        None,
    )
    if name is None:
        return _speedup(group)
    label, unit, _ = METRIC_DISPLAY[name]
    before, after = baseline.entry["metrics"][name], chosen.entry["metrics"][name]
    time_text = chosen.relative_text()
    memory = f"{label}은(는) {format_number(before)} → {format_number(after)} {unit}"
    if before > 0:
        memory += f"({100 * (1 - after / before):.0f}% 줄어듦)"
    return f"‘{chosen.label}’은(는) 기준보다 속도가 {time_text}이고, {memory}입니다."


def _waterfall(group: Group) -> str:
    stages = [row for row in group.rows if row.relative_speed is not None]
    if len(stages) < 2:
        return _speedup(group)
    steps = [
        (row.label, row.relative_speed / previous.relative_speed, row)
        for previous, row in zip(stages, stages[1:], strict=False)
    ]
    best = max(steps, key=lambda step: step[1])
    flat = [label for label, ratio, row in steps if ratio < 1.02]
    final = stages[-1]
    text = (
        f"마지막 단계는 기준의 {format_ratio(final.relative_speed)}입니다. 가장 크게 빨라진 단계는 "
        f"‘{best[0]}’(앞 단계의 {format_ratio(best[1])})입니다."
    )
    if final.ceiling_percent is not None:
        text += f" 마지막 단계의 MFU는 {final.ceiling_percent:.0f}%입니다."
    if flat:
        text += " 이 장치에서 효과가 없거나 느려진 단계: " + ", ".join(f"‘{x}’" for x in flat) + "."
    return text


# --- `pytest --benchmark`의 한국어 요약 ------------------------------------------------------


def describe_row(row: Row) -> str:
    parts = [row.label]
    if not row.computed:
        parts.append(format_seconds(row.entry["median_s"]))
    for name, value in row.shown_metrics().items():
        label, _, rate = METRIC_DISPLAY[name]
        parts.append(
            format_metric(name, value) if rate else f"{label} {format_metric(name, value)}"
        )
    if row.ceiling_percent is not None:
        parts.append(f"천장 대비 {row.ceiling_percent:.0f}%")
    return ", ".join(parts)


def summary_lines(doc: dict) -> list[str]:
    """`pytest --benchmark`가 끝에 출력하는 페이지별 한국어 요약입니다."""
    env = doc["environment"]
    lines = [f"측정 장치: {env['device_name']} ({env['device_kind']}), torch {env['torch']}"]
    for page_id in unknown_pages(doc):
        lines.append(f"{page_id}: guide/pages.toml에 없는 페이지라 요약하지 않습니다")
    for page_id in measured_pages(doc):
        page = registry.by_id(page_id)
        lines.append(page.heading)
        for group in groups_for(doc, page_id):
            lines.append(f"  {group.title} — {group.work()}당")
            for row in group.rows:
                relative = row.relative_text()
                compared = f" · 기준 대비 {relative}" if relative and row.role != "baseline" else ""
                lines.append(f"    [{ROLE_LABELS[row.role]}] {describe_row(row)}{compared}")
            lines.append(f"    → {conclusion(group, env)}")
        for title, reason in not_measured_for(doc, page_id):
            lines.append(f"  재지 않음({title}): {reason}")
    return lines
