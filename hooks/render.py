"""측정한 페이지의 결과 부분: 장치마다 비교 묶음의 표와 결론, 차트, 스윕, 손익분기, 측정 환경.

숫자는 benchmarks/analysis.py가, 문장은 benchmarks/conclusions.py가, 그림은 hooks/charts.py가
만들고, 여기서는 보여 줄 값을 고르고 이름을 붙여 템플릿(hooks/templating.py)에 넘깁니다.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from markupsafe import Markup

from guide import registry
from hooks import charts
from hooks.group_table import GroupView, group_view
from hooks.results_data import Device
from hooks.templating import Chart, Url, measure_command, plain, render
from report import analysis, curve_sentences, curves
from report.formatting import format_number
from torchdoctor.words import ratio_text


@dataclass
class SweepView:
    title: str
    sentence: str
    chart: Markup
    rows: list[list[str]]
    header: list[str]


@dataclass
class DeviceView:
    slug: str
    title: str
    is_cpu: bool
    measured: bool
    not_applicable: str
    stale: dict[str, str]
    command: str
    groups: list[GroupView] = field(default_factory=list)
    charts: list[Markup] = field(default_factory=list)
    sweeps: list[SweepView] = field(default_factory=list)
    missing_sweeps: list[tuple[str, str]] = field(default_factory=list)
    break_evens: list[str] = field(default_factory=list)
    reports: list[dict] = field(default_factory=list)
    not_measured: list[tuple[str, str]] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)
    raw_url: str = ""
    environment_url: str = ""
    folded: bool = False  # 기준 CPU가 아닌 CPU: 접어 두고 펼치면 보입니다


def _bars(group: analysis.Group) -> list[tuple]:
    return [
        (plain(r.label), r.role, r.ratio.median, r.ratio.low, r.ratio.high, r.verdict)
        for r in group.rows
        if r.ratio
    ]


def _charts(
    device: Device, page: registry.Page, groups: list[analysis.Group], chart
) -> list[Markup]:
    found, series = [], []
    for group in groups:
        if group.spec.conclusion == "waterfall":
            found.append(chart(charts.waterfall_chart(
                f"chart-{page.id}-{group.key}-{device.slug}", group.title,
                _waterfall_stages(group, device),
            )))  # fmt: skip
        elif group.baseline and len(_bars(group)) >= 1:
            baseline = (plain(group.baseline.label), "baseline", 1.0, 1.0, 1.0, "same")
            series.append((group.title, [baseline, *_bars(group)]))
    if series:
        title = f"{page.heading} — {device.title}"
        found.insert(
            0, chart(charts.relative_speed_chart(f"chart-{page.id}-{device.slug}", title, series))
        )
    return found


def _waterfall_stages(group: analysis.Group, device: Device) -> list[tuple]:
    cuda_only = set(group.page.cuda_only) if not device.is_cuda else set()
    stages = []
    for row in group.rows:
        if row.role == "ceiling" or row.computed:
            continue
        verdict = row.previous.verdict if row.previous else None
        no_mechanism = row.entry["variant"] in cuda_only
        ratio = row.ratio.median if row.ratio else None
        stages.append((plain(row.label), row.metric("tokens_per_s") or 0.0, row.ceiling_percent,
                       None if no_mechanism else verdict, no_mechanism, ratio))  # fmt: skip
    return stages


def _sweep_views(device: Device, view: analysis.PageView, chart: Chart) -> list[SweepView]:
    found = []
    for key, points in view.sweeps().items():
        spec = view.page.sweep(key)
        title = registry.fill(spec.title, view.sweep_params(key))
        name = f"chart-{view.page.id}-sweep-{key}-{device.slug}"
        values = [(p.x, p.ratio.median, p.ratio.low, p.ratio.high) for p in points]
        cross = curves.crossover(points)
        sentence = curve_sentences.sweep_sentence(spec, points, cross)
        svg = charts.sweep_chart(name, title, spec.x_label, values, cross.x, sentence)
        header = [spec.x_label, "기준 대비 속도(95% 구간)"]
        memory = spec.memory and any("peak_memory_mib" in p.metrics["variant"] for p in points)
        header += ["최대 메모리 증가(MiB): 기준 → 비교"] * memory
        rows = []
        for point in points:
            cells = [format_number(point.x), ratio_text(point.ratio)]
            if memory:
                before = point.metrics["baseline"].get("peak_memory_mib")
                after = point.metrics["variant"].get("peak_memory_mib")
                known = before is not None and after is not None
                cells.append(f"{format_number(before)} → {format_number(after)}" if known else "—")
            rows.append(cells)
        found.append(SweepView(title, sentence, chart(svg), rows, header))
    return found


def _runs_text(measured: dict) -> str:
    """측정 날짜와 실행 수. 실행이 여럿이면 구간이 실행 사이의 차이를 담는다고 밝힙니다."""
    earlier = measured.get("earlier_runs", [])
    if not earlier:
        return f"{measured['date'][:10]}, 한 번 실행(구간은 그 실행의 라운드만 담습니다)"
    first = earlier[-1]["date"][:10]
    dates = (
        measured["date"][:10]
        if first == measured["date"][:10]
        else f"{first}–{measured['date'][:10]}"
    )
    return f"{dates}, 같은 코드로 {len(earlier) + 1}번 실행(구간은 실행 사이의 차이로 냅니다)"


def _provenance(device: Device, section: dict) -> list[str]:
    env, measured = device.device, section["measured"]
    items = [f"torch {env['torch']}"]
    items += [f"CUDA {env['cuda']}"] * bool(env["cuda"])
    items += [f"cuDNN {measured['cudnn']}"] * bool(measured["cudnn"])
    items += [f"드라이버 {measured['driver']}"] * bool(measured["driver"])
    items.append(f"Python {measured['python']}")
    flags = env["cpu_flags"]
    items.append(
        f"CPU {env['cpu_model']}, 코어 {env['usable_cores']}개, torch 스레드 "
        f"{measured['torch_threads']}개" + (f", {' · '.join(flags)}" if flags else "")
    )
    if measured.get("gomp_spincount"):
        items.append(f"GOMP_SPINCOUNT={measured['gomp_spincount']}")
    items.append(_runs_text(measured))
    commit = f"커밋 {measured['commit'][:10]}" if measured["commit"] else "커밋 정보 없음"
    if measured["dirty"]:
        commit += "(커밋되지 않은 변경이 있는 상태)"
    return [*items, commit]


def device_view(
    device: Device, page: registry.Page, url: Url, chart: Chart, folded: bool = False
) -> DeviceView:
    view = device.view(page)
    result = DeviceView(
        slug=device.slug,
        title=device.column_title,
        is_cpu=not device.is_cuda,
        measured=view.measured,
        not_applicable="" if device.applies(page) else page.not_applicable,
        stale=view.stale,
        command=measure_command(page),
        raw_url=url(f"results/{device.path.name}"),
        environment_url=url("results.md") + f"#{device.slug}",
        folded=folded,
    )
    if not view.measured:
        return result
    applies = device.applies(page)
    result.groups = [group_view(group, device.device, applies) for group in view.groups]
    result.charts = _charts(device, page, view.groups, chart)
    result.sweeps = _sweep_views(device, view, chart)
    measured_sweeps = set(view.sweeps())
    for key, spec in page.sweeps.items():
        if key in measured_sweeps:
            continue
        name = registry.name_without_values(spec.title)  # 잰 값이 없어 `{자리}`를 채울 수 없습니다
        if spec.requires == "cuda" and not device.is_cuda:
            result.missing_sweeps.append((name, f"해당 없음: {spec.not_applicable}"))
        else:
            result.missing_sweeps.append((name, "아직 재지 않음(`--sweep`으로 잽니다)"))
    result.break_evens = [curve_sentences.break_even_sentence(r) for r in view.break_evens()]
    result.not_measured = view.not_measured
    result.provenance = _provenance(device, view.section)
    for group in view.groups:
        for row in group.rows:
            excerpt = row.entry.get("extra", {}).get("report_excerpt")
            if excerpt:
                title = (
                    group.spec.report_title or f"{plain(row.label)}의 보고서(측정한 실행에서 캡처)"
                )
                result.reports.append({"title": title, "text": excerpt.expandtabs(4)})
    return result


def page_results(
    page: registry.Page,
    devices: list[Device],
    verified: bool,
    url: Url,
    chart: Chart,
    folded: Collection[str] = (),
) -> str:
    gpu_note = ""
    if page.gpu_sections and not verified:
        gpu_note = (
            "이 페이지의 GPU 경로(코드와 벤치마크)는 지금 코드 그대로 CUDA GPU에서 잰 결과 파일이 "
            "아직 없습니다. CPU에서만 실행해 확인했습니다."
        )
    return render(
        "page_results.html",
        devices=[device_view(d, page, url, chart, d.slug in folded) for d in devices],
        gpu_note=gpu_note,
        command=measure_command(page),
        contribute_url=url("method.md") + "#contribute",
    )
