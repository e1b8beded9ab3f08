"""크기를 바꿔 가며 재는 스윕: 크기(x)마다 기준과 변형을 섞인 라운드로 재고, 짝 비율과 95% 구간을
점 하나로 남깁니다. 페이지는 그 점들로 곡선과 교차점("이 장치에서는 폭 ≈ 192부터 빨라집니다")을
그립니다(benchmarks/analysis.py의 crossover).

    run = sweep("width")                       # guide/pages.toml의 [page.sweeps.width]
    for width in WIDTHS[size_key]:
        run.point(width, (step, fp32_model, x), (step, bf16_model, x), params={"layers": 2})

스윕은 `--sweep`을 줄 때만 잽니다(벤치마크에 `@pytest.mark.sweep("width")`). 평소 pytest는 작은
크기로 한 번씩 불러 코드가 도는지만 봅니다.
"""

from __future__ import annotations

import dataclasses

import pytest

from guide import registry
from measuring import interleave, measure
from results_format import provenance
from torchdoctor import stats

# 점 하나의 라운드 시간 예산(초). 묶음보다 짧게 잡습니다: 점이 여러 개이기 때문입니다.
POINT_BUDGET = {"cpu": 6.0, "cuda": 3.0}


def _point_settings(state) -> interleave.Settings:
    settings = state.settings
    if settings.dry_run:
        return settings
    return dataclasses.replace(settings, budget_s=POINT_BUDGET[state.device.type])


class Sweep:
    """스윕 하나(guide/pages.toml의 [page.sweeps.<key>])의 점들을 모읍니다."""

    def __init__(self, page: registry.Page, key: str, state, benchmark):
        self.page, self.spec, self.state, self.benchmark = page, page.sweep(key), state, benchmark
        self.points: list[dict] = []

    def point(self, x, baseline: tuple, variant: tuple, *, params=None, work=(1.0, 1.0),
              memory=None) -> tuple:  # fmt: skip
        """x에서 기준 (fn, *args)과 변형 (fn, *args)을 재고 두 출력을 돌려줍니다.

        work: 호출 한 번의 일(기준, 변형). 일의 양이 다르면 일 하나당 시간으로 비교합니다.
        """
        params = {self.spec.x: x, **(params or {})}
        self.page.variant_label(self.spec.baseline, params)  # 레지스트리의 이름인지 확인합니다.
        self.page.variant_label(self.spec.variant, params)
        memory = self.spec.memory if memory is None else memory
        items = [
            interleave.Timed(name, fn, tuple(args), memory=memory, work=float(amount))
            for name, (fn, *args), amount in zip(
                ("baseline", "variant"), (baseline, variant), work, strict=True
            )  # fmt: skip
        ]
        if not self.state.timing:
            return tuple(item.fn(*item.args) for item in items)
        for item in items:
            fixture = interleave.clone_fixture(self.benchmark, f"{self.spec.key}-{x}-{item.key}",
                                               f"{self.page.id}.sweep-{self.spec.key}",
                                               {"page": self.page.id, "x": x})  # fmt: skip
            interleave.prepare(item, fixture, _point_settings(self.state), self.state.device)
        seed = interleave.stable_seed(self.state.seed, self.page.id, self.spec.key, x)
        info = interleave.run_rounds(items, items[0], _point_settings(self.state), seed)
        base, var = items
        metrics = {"baseline": {}, "variant": {}}
        for name, item in zip(("baseline", "variant"), items, strict=True):
            if item.peak_mib is not None:
                metrics[name]["peak_memory_mib"] = stats.rounded(item.peak_mib)
        self.points.append({
            "x": x,
            "rounds": info["rounds"],
            "seed": seed,
            "params": params,
            "baseline_s": stats.rounded(stats.median(base.seconds)),
            "variant_s": stats.rounded(stats.median(var.seconds)),
            "ratio": interleave.interval(base, var).as_dict(),
            "metrics": metrics,
        })  # fmt: skip
        outputs = (base.output, var.output)
        for item in items:
            item.fn = item.args = item._runner = item.output = None
        return outputs

    def finish(self) -> None:
        if self.state.timing and self.points:
            self.state.record_sweep(self.page.id, self.spec.key, {
                "measured": provenance.describe_code(self.page, measure.ROOT),
                "points": self.points,
            })  # fmt: skip


@pytest.fixture
def sweep(request, measurement_run, benchmark):
    """`sweep(key)`: 이 모듈 페이지의 스윕 하나. 테스트가 끝나면 점들을 결과에 기록합니다."""
    interleave.claim(benchmark)
    page = measure.page_of(request.module, request)
    declared = request.node.get_closest_marker("sweep")
    made: list[Sweep] = []

    def start(key: str) -> Sweep:
        if declared is None or key not in declared.args:
            raise registry.RegistryError(
                f"{request.node.nodeid}: @pytest.mark.sweep(...)에 스윕 {key!r}가 없습니다"
            )
        made.append(Sweep(page, key, measurement_run, benchmark))
        return made[-1]

    yield start
    for run in made:
        run.finish()
