"""결과 문서(dict)에서 비교를 계산합니다: 기준 대비 속도, 헤드라인 속도 향상, 천장 대비 비율.

`pytest --benchmark`의 한국어 요약과 MkDocs 훅(hooks/results.py)이 같은 계산을 쓰도록 여기에
모았습니다. 값을 저장하지 않고 필요할 때마다 결과 파일의 중앙값에서 다시 계산합니다.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# 결과 파일의 metrics에 쓸 수 있는 이름과 표시 방법입니다. rate=True는 "클수록 좋은 속도"라서
# 천장(같은 실행에서 잰 최대 속도)과 비교할 수 있습니다.
METRICS = {
    "gb_per_s": {"label": "대역폭", "unit": "GB/s", "rate": True},
    "tflop_per_s": {"label": "연산 속도", "unit": "TFLOP/s", "rate": True},
    "samples_per_s": {"label": "처리량", "unit": "샘플/초", "rate": True},
    "steps_per_s": {"label": "처리량", "unit": "스텝/초", "rate": True},
    "peak_memory_mib": {"label": "최대 메모리", "unit": "MiB", "rate": False},
    "syncs_per_step": {"label": "스텝당 동기화", "unit": "회", "rate": False},
}

ROLES = ("baseline", "fast", "other", "ceiling")

TIP_TITLES = {
    "tip1": "팁 1 · DataLoader의 워커(num_workers)",
    "tip2": "팁 2 · 고정된 메모리(pin_memory)",
    "tip3": "팁 3 · CPU↔GPU 동기화 피하기",
    "tip4": "팁 4 · 텐서를 장치에서 바로 만들기",
    "tip5": "팁 5 · DP 대신 DDP",
    "tip6": "팁 6 · 16비트 정밀도",
    "tip7": "팁 7 · 프로파일링",
}


def format_seconds(seconds: float) -> str:
    """사람이 읽기 좋은 시간 단위로 바꿉니다(유효숫자 세 자리)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_metric(name: str, value: float) -> str:
    unit = METRICS[name]["unit"]
    if name == "syncs_per_step":
        return f"{value:.3g}{unit}"
    return f"{value:,.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def format_ratio(ratio: float) -> str:
    return f"{ratio:.2f}배" if ratio < 10 else f"{ratio:.1f}배"


@dataclass
class Row:
    """표의 한 줄: 측정 하나와, 같은 그룹의 기준 및 천장에 대한 비교입니다."""

    entry: dict
    relative_speed: float | None = None  # 기준 중앙값 / 이 중앙값 (1보다 크면 빠름)
    ceiling_percent: float | None = None


@dataclass
class Group:
    name: str
    rows: list[Row] = field(default_factory=list)

    def with_role(self, role: str) -> Row | None:
        return next((row for row in self.rows if row.entry["role"] == role), None)

    @property
    def speedup(self) -> float | None:
        """그룹의 헤드라인: 느린 방식(기준) 대비 빠른 방식의 속도 향상입니다."""
        fast = self.with_role("fast")
        return fast.relative_speed if fast else None

    @property
    def within_noise(self) -> bool:
        """느린 방식과 빠른 방식의 중앙값 차이가 두 측정의 흔들림(IQR)보다 작은지.

        그렇다면 이 실행에서는 두 방식이 다르다고 말할 수 없습니다(예: CPU에서 `.to("cpu")`).
        """
        baseline, fast = self.with_role("baseline"), self.with_role("fast")
        if not (baseline and fast):
            return False
        slow, quick = baseline.entry, fast.entry
        return abs(slow["median_s"] - quick["median_s"]) <= max(slow["iqr_s"], quick["iqr_s"])


def entries_for(doc: dict, tip: str) -> list[dict]:
    return [entry for entry in doc["benchmarks"] if entry["tip"] == tip]


def not_measured_for(doc: dict, tip: str) -> list[dict]:
    return [item for item in doc["not_measured"] if item["tip"] == tip]


def skip_reasons(doc: dict, tip: str) -> list[tuple[list[str], str]]:
    """재지 않은 항목을 이유별로 묶습니다: [([항목, ...], 이유)]. 같은 이유는 한 번만 씁니다."""
    reasons: dict[str, list[str]] = {}
    for item in not_measured_for(doc, tip):
        reasons.setdefault(item["reason"], []).append(item["key"])
    return [(keys, reason) for reason, keys in reasons.items()]


def ceiling_percent(entry: dict, ceiling: dict) -> float | None:
    """두 측정이 같은 단위의 속도를 가졌다면, 천장 대비 비율(%)을 돌려줍니다."""
    for name, spec in METRICS.items():
        if spec["rate"] and name in entry["metrics"] and name in ceiling["metrics"]:
            return 100.0 * entry["metrics"][name] / ceiling["metrics"][name]
    return None


def groups_for(doc: dict, tip: str) -> list[Group]:
    """팁의 측정을 그룹별로 묶고, 그룹 안의 기준(baseline)과 천장에 대해 비교합니다."""
    by_id = {entry["id"]: entry for entry in doc["benchmarks"]}
    groups: dict[str, Group] = {}
    for entry in entries_for(doc, tip):
        groups.setdefault(entry["group"], Group(entry["group"])).rows.append(Row(entry))
    for group in groups.values():
        baseline = group.with_role("baseline")
        for row in group.rows:
            if baseline and row.entry["role"] != "ceiling":
                row.relative_speed = baseline.entry["median_s"] / row.entry["median_s"]
            ceiling = by_id.get(row.entry.get("ceiling") or "")
            if ceiling:
                row.ceiling_percent = ceiling_percent(row.entry, ceiling)
    return list(groups.values())


def headline(doc: dict, tip: str) -> tuple[Group, float] | None:
    """팁의 대표 숫자: 기준과 빠른 방식이 모두 있는 첫 그룹의 속도 향상입니다."""
    for group in groups_for(doc, tip):
        if group.speedup is not None:
            return group, group.speedup
    return None


def measured_tips(doc: dict) -> list[str]:
    tips = {entry["tip"] for entry in doc["benchmarks"]} | {x["tip"] for x in doc["not_measured"]}
    return sorted(tips, key=lambda tip: (len(tip), tip))


def describe_row(row: Row) -> str:
    entry = row.entry
    parts = [f"{entry['variant']} {format_seconds(entry['median_s'])}"]
    parts += [format_metric(name, value) for name, value in entry["metrics"].items()]
    if row.ceiling_percent is not None:
        parts.append(f"천장 대비 {row.ceiling_percent:.0f}%")
    return ", ".join(parts)


def summary_lines(doc: dict) -> list[str]:
    """`pytest --benchmark`가 끝에 출력하는 팁별 한국어 요약입니다."""
    env = doc["environment"]
    lines = [f"측정 장치: {env['device_name']} ({env['device_kind']}), torch {env['torch']}"]
    for tip in measured_tips(doc):
        lines.append(TIP_TITLES.get(tip, tip))
        for group in groups_for(doc, tip):
            baseline, fast = group.with_role("baseline"), group.with_role("fast")
            if baseline and fast:
                noise = (
                    " (차이가 IQR 안이라 잡음과 구별되지 않습니다)" if group.within_noise else ""
                )
                lines.append(
                    f"  {group.name}: 느린 방식 {describe_row(baseline)} → 빠른 방식 "
                    f"{describe_row(fast)} · 속도 향상 {format_ratio(group.speedup)}{noise}"
                )
                others = [row for row in group.rows if row not in (baseline, fast)]
            else:
                lines.append(f"  {group.name}:")
                others = group.rows
            for row in others:
                relative = row.relative_speed
                compared = f" · 기준 대비 {format_ratio(relative)}" if relative else ""
                lines.append(f"    {describe_row(row)}{compared}")
        for keys, reason in skip_reasons(doc, tip):
            lines.append(f"  재지 않음({', '.join(keys)}): {reason}")
    return lines
