"""벤치마크가 쓰는 준비물 `compare`: 비교 묶음 하나의 변형들을 모아 섞인 라운드로 잽니다.

    group = compare("step", params={"d_model": 512})
    group.add("fp32", step, model, x, role="baseline", per_call={"flops": flops})
    group.add("bf16", step_bf16, model, x, role="recommended", per_call={"flops": flops})
    outputs = group.run()

- 이름(묶음, 변형, 역할, 일의 단위, 지표)은 평소 `pytest`에서도 guide/pages.toml과 맞춰 봅니다.
  레지스트리에 없는 이름은 CI에서 바로 멈춥니다.
- 평소 `pytest`: 변형마다 한 번씩 부르고 출력을 돌려줍니다(작은 입력, 시간은 재지 않음).
- `pytest --benchmark`: benchmarks/interleave.py가 섞인 라운드로 재고, 기준과의 짝 비율과 95%
  구간, 최대 메모리를 결과에 씁니다.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from guide import registry
from measuring import interleave
from results_format import schema
from torchdoctor import stats

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Variant:
    key: str
    variant: str
    role: str
    params: dict
    per_call: dict
    metrics: dict
    ceiling: str | None
    timed: interleave.Timed
    smoke: bool = True


@dataclass
class Comparison:
    """비교 묶음 하나(guide/pages.toml의 [page.groups.<key>])."""

    page: registry.Page
    key: str
    state: object  # session.MeasurementRun
    benchmark: object  # 테스트의 pytest-benchmark 준비물
    params: dict = field(default_factory=dict)
    per_call: dict = field(default_factory=dict)
    budget_s: float | None = None
    max_rounds: int | None = None  # 라운드 하나가 아주 비싼 묶음(새 프로세스로 재기 등)
    variants: list[Variant] = field(default_factory=list)
    results: dict[str, dict] = field(default_factory=dict)  # run() 뒤: key → 결과 항목

    def add(self, variant, fn: Callable, *args, key=None, role="other", params=None,
            per_call=None, metrics=None, ceiling=None, max_rounds=None, before_round=None,
            memory=True, smoke=True) -> None:  # fmt: skip
        """변형 하나를 더합니다. 지금 재지 않고 run()에서 다른 변형과 섞어 잽니다.

        smoke=False: 평소 pytest에서는 부르지 않습니다(새 프로세스를 띄우는 것처럼 비싼 변형).
        """
        key = key or variant
        params = {**self.params, **(params or {})}
        per_call = {**self.per_call, **(per_call or {})}
        self._check(key, variant, role, params, per_call, metrics or {})
        work = next((per_call[n] for n in schema.WORK_ORDER if per_call.get(n)), 1.0)
        timed = interleave.Timed(key, fn, args, before_round, max_rounds, memory, float(work))
        self.variants.append(
            Variant(
                key, variant, role, params, per_call, dict(metrics or {}), ceiling, timed, smoke
            )
        )

    def computed(self, key, variant, *, metrics, params=None, role="ceiling") -> None:
        """시간을 재지 않고 계산한 천장(예: 워커 하나의 속도 × 코어 수)."""
        params = {**self.params, **(params or {})}
        self._check(key, variant, role, params, {}, metrics)
        if self.state.timing:
            entry = _entry(key, self.key, variant, role, params, metrics, None, None)
            self.state.record_group(self.page.id, self.key, {}, [entry])

    def not_measured(self, reason: str) -> None:
        """이 묶음의 일부를 이 장치에서 재지 않은 이유(예: CUDA가 필요함)."""
        self.state.record_not_measured(self.page.id, self.key, reason)

    def _check(self, key, variant, role, params, per_call, metrics) -> None:
        if role not in schema.ROLES:
            raise registry.RegistryError(
                f"{self.page.id}: 역할 {role!r}은 {schema.ROLES} 가운데 하나여야 합니다"
            )
        self.page.variant_label(variant, params)  # 레지스트리에 없는 변형이면 여기서 멈춥니다.
        unknown = set(per_call) - set(schema.RATES) | set(metrics) - set(schema.METRICS)
        if unknown:
            raise registry.RegistryError(f"{self.page.id}.{key}: 알 수 없는 이름 {sorted(unknown)}")
        if any(v.key == key for v in self.variants):
            raise registry.RegistryError(f"{self.page.id}: 같은 key {key!r}가 두 번 나옵니다")
        self.state.note_key(self.page.id, key, role)

    def run(self) -> dict[str, object]:
        """변형을 재고(또는 평소 pytest라면 한 번씩 부르고) key → 마지막 출력을 돌려줍니다."""
        if not self.state.timing:
            outputs = {v.key: v.timed.fn(*v.timed.args) for v in self.variants if v.smoke}
            self._release()
            return outputs
        items = [v.timed for v in self.variants]
        for variant in self.variants:
            extra = {"page": self.page.id, "group": self.key, "role": variant.role}
            fixture = interleave.clone_fixture(
                self.benchmark, variant.key, f"{self.page.id}.{self.key}", extra
            )
            interleave.prepare(variant.timed, fixture, self.state.settings, self.state.device)
        baseline = next((v.timed for v in self.variants if v.role == "baseline"), None)
        # 폭포(전부 합치면)는 변형이 차례로 쌓이므로 바로 앞 변형과의 짝 비율도 냅니다.
        chained = self.page.group(self.key).conclusion == "waterfall"
        settings = self.state.settings
        if self.budget_s is not None and not settings.dry_run:
            settings = dataclasses.replace(settings, budget_s=self.budget_s)
        if self.max_rounds is not None and not settings.dry_run:
            rounds = min(self.max_rounds, settings.min_rounds)
            settings = dataclasses.replace(settings, min_rounds=rounds, max_rounds=self.max_rounds)
        info = interleave.run_rounds(items, baseline, settings, self._seed()) if items else {}
        entries = [self._entry(v, baseline) for v in self.variants]
        if chained:
            by_key = {entry["key"]: entry for entry in entries}
            timed = [v for v in self.variants if v.role != "ceiling"]
            for before, after in zip(timed, timed[1:], strict=False):
                ratio = interleave.interval(before.timed, after.timed).as_dict()
                by_key[after.key]["versus_previous"] = ratio
        self.state.record_group(self.page.id, self.key, info, entries)
        self.results = {entry["key"]: entry for entry in entries}
        outputs = {v.key: v.timed.output for v in self.variants}
        self._release()
        return outputs

    def _release(self) -> None:
        """잰 뒤에는 함수와 인자(모델, 로더의 워커)를 놓아 테스트가 끝나기 전에 정리되게 합니다."""
        for variant in self.variants:
            timed = variant.timed
            timed.fn = timed.args = timed.before_round = timed._runner = timed.output = None

    def attach(self, key: str, **extra: str) -> None:
        """잰 항목에 측정한 실행에서 캡처한 글(예: 프로파일러 보고서 발췌)을 붙입니다."""
        if key in self.results:
            self.results[key]["extra"] = extra

    def rate(self, key: str, metric: str) -> float | None:
        """run() 뒤에 잰 속도(예: samples_per_s). 시간을 재지 않는 평소 pytest에서는 None."""
        entry = self.results.get(key)
        return entry["metrics"].get(metric) if entry else None

    def _seed(self) -> int:
        return interleave.stable_seed(self.state.seed, self.page.id, self.key)

    def _entry(self, variant: Variant, baseline) -> dict:
        timed = variant.timed
        seconds = stats.median(timed.seconds)
        metrics = {
            schema.RATES[name][0]: amount / seconds / schema.RATES[name][1]
            for name, amount in variant.per_call.items()
            if amount
        }
        metrics |= variant.metrics
        if timed.peak_mib is not None:
            metrics["peak_memory_mib"] = timed.peak_mib
        ratio = None
        if baseline is not None and timed is not baseline and variant.role != "ceiling":
            ratio = interleave.interval(baseline, timed).as_dict()
        return _entry(
            variant.key, self.key, variant.variant, variant.role, variant.params, metrics,
            variant.ceiling, timed, ratio,
        )  # fmt: skip


def _entry(key, group, variant, role, params, metrics, ceiling, timed, ratio=None) -> dict:
    timing = (
        {"computed": True, "median_s": None, "iqr_s": None, "rounds": 0, "iterations": 0}
        if timed is None
        else {
            "computed": False,
            "median_s": stats.rounded(stats.median(timed.seconds)),
            "iqr_s": stats.rounded(stats.iqr(timed.seconds)),
            "rounds": len(timed.seconds),
            "iterations": timed.iterations,
        }
    )
    return {
        "key": key,
        "group": group,
        "variant": variant,
        "role": role,
        **timing,
        "params": params,
        "metrics": {name: stats.rounded(value) for name, value in metrics.items()},
        "ceiling": ceiling,
        "ratio": ratio,
    }


class Compare:
    """`compare` 준비물: 부를 때마다 이 테스트 모듈 페이지의 비교 묶음 하나를 만듭니다."""

    def __init__(self, request, run, benchmark):
        self.request, self.run, self.benchmark = request, run, benchmark
        self.page = page_of(request.module, request)
        self.groups: list[Comparison] = []

    def __call__(self, group: str, *, params=None, per_call=None, budget_s=None,
                 max_rounds=None) -> Comparison:  # fmt: skip
        self.page.group(group)  # 레지스트리에 없는 묶음이면 여기서 멈춥니다(평소 pytest에서도).
        declared = self.request.node.get_closest_marker("measures")
        if declared is None or group not in declared.args:
            raise registry.RegistryError(
                f"{self.request.node.nodeid}: @pytest.mark.measures(...)에 "
                f"묶음 {group!r}가 없습니다"
            )
        made = Comparison(self.page, group, self.run, self.benchmark, dict(params or {}),
                          dict(per_call or {}), budget_s, max_rounds)  # fmt: skip
        self.groups.append(made)
        return made


def page_of(module, request=None) -> registry.Page:
    """이 벤치마크가 재는 페이지: 모듈의 PAGE, 또는 레지스트리만으로 재는 모듈이면 매개변수 page."""
    page_id = getattr(module, "PAGE", None)
    if page_id is None and request is not None and hasattr(request.node, "callspec"):
        page_id = request.node.callspec.params.get("page")
    if page_id is None:
        raise registry.RegistryError(f"{module.__name__}: PAGE가 없습니다")
    page = registry.by_id(page_id)
    if page.benchmark != module.__name__.rpartition(".")[2]:
        raise registry.RegistryError(
            f"{module.__name__}: pages.toml의 {page.id} 벤치마크가 아닙니다"
        )
    return page


@pytest.fixture
def compare(request, measurement_run, benchmark) -> Compare:
    interleave.claim(benchmark)
    return Compare(request, measurement_run, benchmark)
