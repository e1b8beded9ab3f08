"""결과 파일의 한 페이지 부분에서 보여 줄 숫자를 계산합니다: 구간, 판정, 천장 대비, 교차점, 본전.

숫자만 다룹니다(문장은 report/conclusions.py, HTML은 hooks/). 값은 저장하지 않고 결과
파일에서 매번 계산합니다. 빌드는 장치마다 한 번만 계산해 훅에 넘깁니다.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guide import registry
from report.curves import Point
from results_format import provenance, schema
from torchdoctor import words
from torchdoctor.stats import Interval

# 결과의 metrics를 보여 주는 방법: (이름, 단위, 클수록 좋은 속도인지). 속도만 천장과 비교합니다.
METRIC_DISPLAY = {
    "gb_per_s": ("대역폭", "GB/s", True),
    "tflop_per_s": ("연산 속도", "TFLOP/s", True),
    "samples_per_s": ("처리량", "샘플/초", True),
    "steps_per_s": ("처리량", "스텝/초", True),
    "tokens_per_s": ("처리량", "토큰/초", True),
    "peak_memory_mib": ("최대 메모리 증가", "MiB", False),
    "saved_activation_mib": ("저장한 활성값", "MiB", False),
    "worker_memory_growth_mib": ("워커 메모리 증가", "MiB", False),
    "syncs_per_step": ("스텝당 동기화", "회", False),
    "allreduces_per_step": ("스텝당 all-reduce", "회", False),
    "graph_breaks": ("그래프 끊김", "회", False),
    "recompiles": ("재컴파일", "회", False),
    "compile_s": ("컴파일 시간", "초", False),
    "one_time_s": ("한 번 드는 시간", "초", False),
    "precompute_s": ("미리 계산한 시간(한 번)", "초", False),
    "loss": ("마지막 손실", "", False),
}
assert tuple(METRIC_DISPLAY) == schema.METRICS, "지표 이름은 schema.METRICS와 같아야 합니다"
MIN_FLOPS_PER_CALL = 1e9  # 호출 한 번의 연산이 이보다 적으면 TFLOP/s를 숨깁니다(고정 비용)
ROLE_LABELS = {"baseline": "기준", "recommended": "권장 방식", "other": "비교", "ceiling": "천장"}
VERDICTS = words.WORDS


@dataclass
class Row:
    """표의 한 줄: 측정 하나와, 같은 묶음의 기준 및 천장에 대한 비교."""

    entry: dict
    label: str
    ratio: Interval | None = None
    previous: Interval | None = None  # 앞 단계 대비(전부 합치면의 폭포)
    ceiling_percent: float | None = None

    @property
    def role(self) -> str:
        return self.entry["role"]

    @property
    def key(self) -> str:
        return self.entry["key"]

    @property
    def computed(self) -> bool:
        return self.entry["computed"]

    @property
    def verdict(self) -> str | None:
        return self.ratio.verdict if self.ratio else None

    def metric(self, name: str) -> float | None:
        return self.entry["metrics"].get(name)

    def shown_metrics(self) -> dict[str, float]:
        """표에 보일 값: 호출 한 번의 연산이 너무 작으면 TFLOP/s는 뺍니다."""
        metrics = dict(self.entry["metrics"])
        if "tflop_per_s" in metrics and not self.computed:
            if metrics["tflop_per_s"] * 1e12 * self.entry["median_s"] < MIN_FLOPS_PER_CALL:
                del metrics["tflop_per_s"]
        return metrics


@dataclass
class Group:
    page: registry.Page
    key: str
    info: dict = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    siblings: dict[str, Group] = field(default_factory=dict, repr=False)  # 같은 페이지의 묶음들

    @property
    def params(self) -> dict:
        merged: dict = {}
        for row in self.rows:
            merged |= row.entry["params"]
        return merged

    @property
    def spec(self) -> registry.Group:
        return self.page.group(self.key)

    @property
    def title(self) -> str:
        return self.page.group_title(self.key, self.params)

    def work(self) -> str:
        return self.page.group_work(self.key, self.params)

    def with_role(self, role: str) -> Row | None:
        return next((row for row in self.rows if row.role == role), None)

    def row(self, key: str) -> Row | None:
        return next((row for row in self.rows if row.key == key), None)

    @property
    def baseline(self) -> Row | None:
        return self.with_role("baseline")

    @property
    def recommended(self) -> Row | None:
        return self.with_role("recommended")

    @property
    def headline(self) -> Row | None:
        """묶음을 대표하는 줄: 권장 방식, 없으면(시간을 내주는 기법) 비율이 있는 마지막 줄."""
        if self.recommended:
            return self.recommended
        return next((row for row in reversed(self.rows) if row.ratio), None)

    @property
    def costliest(self) -> Row | None:
        """구간 전체가 기준보다 느린 변형 가운데 가장 느린 것(도구를 켠 비용 묶음)."""
        slower = [row for row in self.rows if row.verdict == "slower"]
        return min(slower, key=lambda row: row.ratio.median, default=None)


def _ceiling_percent(row: Row, ceiling: dict) -> float | None:
    shown = row.shown_metrics()
    for name, (_, _, rate) in METRIC_DISPLAY.items():
        if rate and name in shown and ceiling["metrics"].get(name, 0) > 0:
            return 100.0 * shown[name] / ceiling["metrics"][name]
    return None


def groups_for(section: dict, page: registry.Page) -> list[Group]:
    """페이지 부분의 측정을 묶음별로 모으고, 기준·앞 단계·천장과의 비교를 붙입니다."""
    by_key = {entry["key"]: entry for entry in section["benchmarks"]}
    groups: dict[str, Group] = {}
    for entry in section["benchmarks"]:
        group = groups.setdefault(
            entry["group"], Group(page, entry["group"], section["groups"].get(entry["group"], {}))
        )
        label = page.variant_label(entry["variant"], entry["params"])
        row = Row(
            entry, label, Interval.of(entry["ratio"]), Interval.of(entry.get("versus_previous"))
        )
        ceiling = by_key.get(entry["ceiling"] or "")
        if ceiling:
            row.ceiling_percent = _ceiling_percent(row, ceiling)
        group.rows.append(row)
    for group in groups.values():
        group.siblings = groups  # 빼 보기의 결론이 폭포를 봅니다
    order = list(page.groups)
    return sorted(groups.values(), key=lambda g: order.index(g.key))


@dataclass(frozen=True)
class BreakEvenResult:
    spec: registry.BreakEven
    cost_s: float
    saving_s: float | None  # 스텝마다 아끼는 시간(구간이 차이 없음이면 None)
    steps: float | None


def break_even(spec: registry.BreakEven, groups: list[Group]) -> BreakEvenResult | None:
    rows = {row.key: row for group in groups for row in group.rows}
    cost, base, variant = rows.get(spec.cost), rows.get(spec.baseline), rows.get(spec.variant)
    if not (cost and base and variant and variant.ratio):
        return None
    value = (
        cost.entry["median_s"] if spec.cost_metric == "median_s" else cost.metric(spec.cost_metric)
    )
    if value is None:
        return None
    other = rows.get(spec.subtract) if spec.subtract else None
    if other and not other.computed:
        # 같은 지표끼리 뺍니다(registry.BreakEven.subtract): 첫 호출에서 첫 호출을 뺍니다.
        taken = (
            other.entry["median_s"]
            if spec.cost_metric == "median_s"
            else other.metric(spec.cost_metric)
        )
        value = max(0.0, value - (taken or 0.0))
    if variant.ratio.verdict != "faster":
        return BreakEvenResult(spec, value, None, None)
    # 호출 한 번이 여러 단위(스텝, 배치)이면 단위 하나가 아끼는 시간으로 나눕니다.
    units = variant.entry["params"].get(spec.per_param, 1) if spec.per_param else 1
    saving = (base.entry["median_s"] - variant.entry["median_s"]) / max(units, 1)
    if saving <= 0:
        return BreakEvenResult(spec, value, None, None)
    return BreakEvenResult(spec, value, saving, value / saving)


def sweep_points(sweep: dict) -> list[Point]:
    return [
        Point(p["x"], Interval.of(p["ratio"]), p["baseline_s"], p["variant_s"], p["metrics"])
        for p in sorted(sweep["points"], key=lambda p: p["x"])
    ]


@dataclass
class PageView:
    """장치 하나에서 페이지 하나의 분석 결과."""

    page: registry.Page
    section: dict | None
    groups: list[Group] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return self.section is not None

    @property
    def not_measured(self) -> list[tuple[str, str]]:
        if not self.section:
            return []
        seen: dict[tuple[str, str], None] = {}
        for item in self.section["not_measured"]:
            seen[(self.page.group_name(item["group"]), item["reason"])] = None
        return list(seen)

    def group(self, key: str) -> Group | None:
        return next((group for group in self.groups if group.key == key), None)

    def sweeps(self) -> dict[str, list[Point]]:
        if not self.section:
            return {}
        return {key: sweep_points(s) for key, s in self.section["sweeps"].items()}

    def sweep_params(self, key: str) -> dict:
        """스윕 제목의 `{자리}`를 채울 값: 점들의 params(모든 점에 같은 값: 층 수, 배치 등)."""
        return {k: v for p in self.section["sweeps"][key]["points"] for k, v in p["params"].items()}

    def break_evens(self) -> list[BreakEvenResult]:
        found = (break_even(spec, self.groups) for spec in self.page.breakeven)
        return [result for result in found if result]


def analyze_page(doc: dict, page: registry.Page) -> PageView:
    section = doc["pages"].get(page.id)
    if section is None:
        return PageView(page, None)
    stale = provenance.changed_sources(section["measured"], page)
    return PageView(page, section, groups_for(section, page), stale)


def analyze(doc: dict) -> dict[str, PageView]:
    """결과 문서 하나(장치 하나)의 모든 레지스트리 페이지를 분석합니다."""
    return {page.id: analyze_page(doc, page) for page in registry.load()}
