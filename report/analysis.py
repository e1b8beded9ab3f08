"""결과 파일의 한 페이지 부분에서 보여 줄 숫자를 계산합니다: 구간, 판정, 천장 대비, 교차점, 본전.

숫자만 다룹니다(문장은 report/conclusions.py, HTML은 hooks/). 값은 저장하지 않고 결과
파일에서 매번 계산합니다. 빌드는 장치마다 한 번만 계산해 훅에 넘깁니다.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guide import registry
from report import runs
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


def across_runs(
    ratio: dict | None, history: list[float] | None, prior: runs.Prior | None = None
) -> Interval | None:
    """결과 파일의 비율: 같은 코드의 예전 실행이 있으면 실행 사이의 구간(report/runs.py), 없으면 이
    실행의 라운드로 낸 구간."""
    interval = Interval.of(ratio)
    if interval is None or not history:
        return interval
    return runs.interval([interval.median, *history], prior)


def _histories(doc: dict):
    """문서의 모든 (지금 중앙값, 예전 중앙값들) 쌍: 항목의 비율과 앞 단계 대비, 스윕의 점."""
    for section in doc["pages"].values():
        for entry in section["benchmarks"]:
            for name, history in (
                ("ratio", "ratio_history"),
                ("versus_previous", "previous_history"),
            ):
                if entry.get(history):
                    yield entry[name]["median"], entry[history]
        for sweep in section["sweeps"].values():
            for point in sweep["points"]:
                if point.get("ratio_history"):
                    yield point["ratio"]["median"], point["ratio_history"]


def prior_of(doc: dict) -> runs.Prior | None:
    """장치 하나의 모든 행이 함께 쓰는 실행 사이 분산의 사전 분포."""
    spreads = [runs.log_spread([now, *earlier])[1:] for now, earlier in _histories(doc)]
    return runs.fit_prior(spreads)


def runs_of(section: dict) -> int:
    """이 페이지 부분을 낸 실행의 수(지금 실행 + 이어 둔 예전 실행)."""
    return 1 + len(section["measured"].get("earlier_runs", []))


def groups_for(section: dict, page: registry.Page, prior: runs.Prior | None = None) -> list[Group]:
    """페이지 부분의 측정을 묶음별로 모으고, 기준·앞 단계·천장과의 비교를 붙입니다."""
    by_key = {entry["key"]: entry for entry in section["benchmarks"]}
    groups: dict[str, Group] = {}
    for entry in section["benchmarks"]:
        group = groups.setdefault(
            entry["group"], Group(page, entry["group"], section["groups"].get(entry["group"], {}))
        )
        label = page.variant_label(entry["variant"], entry["params"])
        row = Row(
            entry,
            label,
            across_runs(entry["ratio"], entry.get("ratio_history"), prior),
            across_runs(entry.get("versus_previous"), entry.get("previous_history"), prior),
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


def sweep_points(sweep: dict, prior: runs.Prior | None = None) -> list[Point]:
    return [
        Point(
            p["x"],
            across_runs(p["ratio"], p.get("ratio_history"), prior),
            p["baseline_s"],
            p["variant_s"],
            p["metrics"],
        )
        for p in sorted(sweep["points"], key=lambda p: p["x"])
    ]


@dataclass
class PageView:
    """장치 하나에서 페이지 하나의 분석 결과."""

    page: registry.Page
    section: dict | None
    groups: list[Group] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)
    prior: runs.Prior | None = None  # 이 장치의 실행 사이 분산의 사전 분포(report/runs.py)

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
        return {key: sweep_points(s, self.prior) for key, s in self.section["sweeps"].items()}

    def sweep_params(self, key: str) -> dict:
        """스윕 제목의 `{자리}`를 채울 값: 점들의 params(모든 점에 같은 값: 층 수, 배치 등)."""
        return {k: v for p in self.section["sweeps"][key]["points"] for k, v in p["params"].items()}

    def break_evens(self) -> list[BreakEvenResult]:
        found = (break_even(spec, self.groups) for spec in self.page.breakeven)
        return [result for result in found if result]


def analyze_page(doc: dict, page: registry.Page, prior: runs.Prior | None = None) -> PageView:
    section = doc["pages"].get(page.id)
    if section is None:
        return PageView(page, None)
    stale = provenance.changed_sources(section["measured"], page)
    return PageView(page, section, groups_for(section, page, prior), stale, prior)


def analyze(doc: dict) -> dict[str, PageView]:
    """결과 문서 하나(장치 하나)의 모든 레지스트리 페이지를 분석합니다. 실행 사이 분산의 사전
    분포는 문서의 모든 행으로 한 번 추정합니다."""
    prior = prior_of(doc)
    return {page.id: analyze_page(doc, page, prior) for page in registry.load()}
