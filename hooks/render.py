"""분석한 결과와 레지스트리를 자동 이스케이프하는 Jinja 템플릿(hooks/templates/)으로 그립니다.

결과 파일의 글자는 바깥 데이터라서 모두 이스케이프하고, Markdown이 다시 해석하지 않도록 HTML 블록
하나로 내보냅니다. 여기서는 보여 줄 값을 고르고 이름을 붙이기만 합니다. 숫자는
benchmarks/analysis.py가, 문장은 benchmarks/conclusions.py가, 그림은 hooks/charts.py가 만듭니다.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from benchmarks import analysis, conclusions
from guide import peaks, registry
from hooks import charts
from hooks.results_data import Device

TEMPLATES = Path(__file__).with_name("templates")
REQUIRES_LABELS = {"any": "CPU 또는 GPU", "cuda": "CUDA GPU", "multi-gpu": "GPU 2개 이상"}
MEASURED_LABELS = {
    "date": "측정 시각(UTC)",
    "commit": "커밋",
    "dirty": "커밋되지 않은 변경",
    "driver": "NVIDIA 드라이버",
    "cudnn": "cuDNN",
    "lightning": "Lightning",
    "python": "Python",
    "platform": "운영체제",
    "torch_threads": "torch 스레드",
    "tf32_matmul": "TF32 행렬 곱(기본값)",
    "float32_matmul_precision": "float32 행렬 곱 정밀도",
    "pytest_benchmark": "pytest-benchmark",
    "seed": "라운드 순서의 시드",
}
DEVICE_LABELS = {
    "name": "장치",
    "count": "GPU 수",
    "power_limit_w": "전력 한도(W)",
    "cpu_model": "CPU",
    "cpu_flags": "CPU 명령어 확장(bf16·행렬 곱 관련)",
    "cpu_cores": "CPU 코어",
    "usable_cores": "쓸 수 있는 코어",
    "torch": "torch",
    "cuda": "CUDA",
}


def _code(text: object) -> Markup:
    """이스케이프한 다음 `백틱`으로 감싼 부분만 <code>로 바꿉니다(이스케이프가 먼저라 안전)."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined)
ENV.filters["code"] = _code


def render(template: str, **context) -> str:
    """템플릿을 그리고 빈 줄을 없앱니다. 빈 줄이 있으면 Markdown이 HTML 블록을 끊습니다."""
    html = ENV.get_template(template).render(**context)
    return "\n".join(line for line in html.splitlines() if line.strip()) + "\n"


def _plain(label: str) -> str:
    return label.replace("`", "")


def _value(value) -> str:
    if isinstance(value, bool):
        return "예" if value else "아니요"
    if isinstance(value, list):
        return ", ".join(value) or "없음"
    return "—" if value is None else str(value)


# --- 표 -----------------------------------------------------------------------------------------


@dataclass
class Column:
    header: str
    numeric: bool = False


@dataclass
class GroupView:
    title: str
    caption: str
    columns: list[Column]
    rows: list[dict]
    conclusion: str


def group_view(group: analysis.Group, device: dict, applies: bool) -> GroupView:
    page = group.page
    metric_names = [
        name
        for name in analysis.METRIC_DISPLAY
        if any(name in row.shown_metrics() for row in group.rows)
    ]
    compared = any(row.ratio for row in group.rows)
    chained = any(row.previous for row in group.rows)
    ceiling = applies and any(row.ceiling_percent is not None for row in group.rows)
    # GPU에서는 공개된 밀집 bf16 최고 성능 대비(MFU)도 보여 줍니다. 표에 없는 GPU면 쓰지 않습니다.
    peak = (
        peaks.match(device["name"], device["power_limit_w"]) if device["kind"] == "cuda" else None
    )
    mfu = bool(peak) and any("tflop_per_s" in row.shown_metrics() for row in group.rows)
    columns = [Column("방식"), Column("역할"), Column(f"중앙값({group.work()}당)", True)]
    columns += [Column("기준 대비 속도(95% 구간)", True)] * compared
    columns += [Column("앞 단계 대비(95% 구간)", True)] * chained
    for name in metric_names:
        label, unit, _ = analysis.METRIC_DISPLAY[name]
        columns.append(Column(f"{label}({unit})" if unit else label, True))
    columns += [Column(f"{group.spec.ceiling_label}(%)", True)] * ceiling
    columns += [Column(f"MFU({peak.label} 공개 최고 대비, %)" if peak else "", True)] * mfu
    rows = []
    for row in group.rows:
        shown = row.shown_metrics()
        cells = [
            row.label,
            analysis.ROLE_LABELS[row.role],
            "계산값" if row.computed else analysis.format_seconds(row.entry["median_s"]),
        ]
        if compared:
            cells.append(conclusions.ratio_cell(row, device, page) if not row.computed else "—")
        if chained:
            cells.append(conclusions.previous_cell(row, device, page) if row.previous else "—")
        cells += [analysis.format_number(shown[n]) if n in shown else "—" for n in metric_names]
        if ceiling:
            percent = row.ceiling_percent
            # 천장을 넘는 값은 흔들림입니다(천장은 같은 실행에서 잰 최대 속도).
            cells.append(
                "—" if percent is None else "≈100%" if percent > 100 else f"{percent:.0f}%"
            )
        if mfu:
            tflops = shown.get("tflop_per_s")
            cells.append("—" if tflops is None else f"{100 * tflops / peak.bf16_dense_tflops:.0f}%")
        rows.append({"role": row.role, "cells": cells})
    info = group.info
    caption = group.title
    if info:
        caption += f" · 라운드 {info['rounds']}번"
    return GroupView(group.title, caption, columns, rows, conclusions.conclusion(group, device))


# --- 페이지의 결과 ------------------------------------------------------------------------------


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


def measure_command(page: registry.Page) -> str:
    return f".venv/bin/python -m pytest benchmarks/{page.benchmark}.py --benchmark --publish"


def _bars(group: analysis.Group) -> list[tuple]:
    return [
        (_plain(r.label), r.role, r.ratio.median, r.ratio.low, r.ratio.high, r.verdict)
        for r in group.rows
        if r.ratio
    ]


def _charts(device: Device, page: registry.Page, groups: list[analysis.Group]) -> list[Markup]:
    found, series = [], []
    for group in groups:
        if group.spec.conclusion == "waterfall":
            found.append(Markup(charts.waterfall_chart(
                f"chart-{page.id}-{group.key}-{device.slug}", group.title,
                _waterfall_stages(group, device),
            )))  # fmt: skip
        elif group.baseline and len(_bars(group)) >= 1:
            baseline = (_plain(group.baseline.label), "baseline", 1.0, 1.0, 1.0, "same")
            series.append((group.title, [baseline, *_bars(group)]))
    if series:
        title = f"{page.heading} — {device.title}"
        found.insert(
            0, Markup(charts.relative_speed_chart(f"chart-{page.id}-{device.slug}", title, series))
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
        stages.append((_plain(row.label), row.metric("tokens_per_s") or 0.0, row.ceiling_percent,
                       None if no_mechanism else verdict, no_mechanism))  # fmt: skip
    return stages


def _sweep_views(device: Device, view: analysis.PageView) -> list[SweepView]:
    found = []
    for key, points in view.sweeps().items():
        spec = view.page.sweep(key)
        # 제목의 `{자리}`는 점들의 params로 채웁니다(모든 점에 같은 값: 층 수, 배치 등).
        params = {
            k: v for p in view.section["sweeps"][key]["points"] for k, v in p["params"].items()
        }
        title = registry.fill(spec.title, params)
        name = f"chart-{view.page.id}-sweep-{key}-{device.slug}"
        values = [(p.x, p.ratio.median, p.ratio.low, p.ratio.high) for p in points]
        cross = analysis.crossover(points)
        sentence = conclusions.sweep_sentence(spec, points)
        chart = charts.sweep_chart(name, title, spec.x_label, values, cross.x, sentence)
        header = [spec.x_label, "기준 대비 속도(95% 구간)"]
        memory = spec.memory and any("peak_memory_mib" in p.metrics["variant"] for p in points)
        header += ["최대 메모리 증가(MiB): 기준 → 비교"] * memory
        rows = []
        for point in points:
            cells = [analysis.format_number(point.x), point.ratio.text()]
            if memory:
                before = point.metrics["baseline"].get("peak_memory_mib")
                after = point.metrics["variant"].get("peak_memory_mib")
                cells.append(f"{analysis.format_number(before)} → {analysis.format_number(after)}"
                             if before is not None and after is not None else "—")  # fmt: skip
            rows.append(cells)
        found.append(SweepView(title, sentence, Markup(chart), rows, header))
    return found


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
    items.append(measured["date"][:10])
    commit = f"커밋 {measured['commit'][:10]}" if measured["commit"] else "커밋 정보 없음"
    if measured["dirty"]:
        commit += "(커밋되지 않은 변경이 있는 상태)"
    return [*items, commit]


def device_view(device: Device, page: registry.Page, url: Callable[[str], str]) -> DeviceView:
    view = device.view(page)
    result = DeviceView(
        slug=device.slug,
        title=device.title,
        is_cpu=not device.is_cuda,
        measured=view.measured,
        not_applicable="" if device.applies(page) else page.not_applicable,
        stale=view.stale,
        command=measure_command(page),
        raw_url=url(f"results/{device.path.name}"),
        environment_url=url("results.md") + f"#{device.slug}",
    )
    if not view.measured:
        return result
    applies = device.applies(page)
    result.groups = [group_view(group, device.device, applies) for group in view.groups]
    result.charts = _charts(device, page, view.groups)
    result.sweeps = _sweep_views(device, view)
    measured_sweeps = set(view.sweeps())
    for key, spec in page.sweeps.items():
        if key in measured_sweeps:
            continue
        name = registry.name_without_values(spec.title)  # 잰 값이 없어 `{자리}`를 채울 수 없습니다
        if spec.requires == "cuda" and not device.is_cuda:
            result.missing_sweeps.append((name, f"해당 없음: {spec.not_applicable}"))
        else:
            result.missing_sweeps.append((name, "아직 재지 않음(`--sweep`으로 잽니다)"))
    result.break_evens = [conclusions.break_even_sentence(r) for r in view.break_evens()]
    result.not_measured = view.not_measured
    result.provenance = _provenance(device, view.section)
    for group in view.groups:
        for row in group.rows:
            excerpt = row.entry.get("extra", {}).get("report_excerpt")
            if excerpt:
                title = (
                    group.spec.report_title or f"{_plain(row.label)}의 보고서(측정한 실행에서 캡처)"
                )
                result.reports.append({"title": title, "text": excerpt.expandtabs(4)})
    return result


def page_results(page: registry.Page, devices: list[Device], verified: bool, url) -> str:
    gpu_note = ""
    if page.gpu_sections and not verified:
        gpu_note = (
            "이 페이지의 GPU 경로(코드와 벤치마크)는 지금 코드 그대로 CUDA GPU에서 잰 결과 파일이 "
            "아직 없습니다. CPU에서만 실행해 확인했습니다."
        )
    return render(
        "page_results.html",
        devices=[device_view(d, page, url) for d in devices],
        gpu_note=gpu_note,
        command=measure_command(page),
        contribute_url=url("method.md") + "#contribute",
    )


# --- 홈의 개요와 전체 결과 ----------------------------------------------------------------------


def _overview_cell(
    device: Device, page: registry.Page, item: dict
) -> tuple[str, str, tuple | None]:
    """개요 표의 칸 하나(글자, 작은 글씨 설명)와 차트 막대(중앙값, 아래, 위, 판정, 글자)."""
    if not device.applies(page):
        return "해당 없음", page.not_applicable, None
    view = device.view(page)
    group = view.group(item["group"])
    if not view.measured or group is None:
        return "아직 재지 않음", "", None
    note = ""
    if group.baseline and item.get("show_baseline"):
        note = f"기준: {_plain(group.baseline.label)}"
    if group.spec.conclusion == "overhead":
        worst = group.costliest
        if worst is None:
            return "차이 없음 (모두 ±5% 안)", note, (1.0, 1.0, 1.0, "same", "차이 없음")
        text = f"가장 비싼 것: {_plain(worst.label)} {worst.ratio.text()}"
        return text, note, (worst.ratio.median, worst.ratio.low, worst.ratio.high, "slower", text)
    row = group.headline
    if not (row and row.ratio):
        return "아직 재지 않음", note, None
    text = row.ratio.text()
    if item.get("value") == "saving" and conclusions.saving_text(group):
        # 배수는 에폭의 길이에 달렸으므로 아낀 시간을 먼저 씁니다(더 나아가기 11).
        text = f"{conclusions.saving_text(group)} 절약 ({text})"
    if view.stale:
        text += " (코드가 바뀐 뒤 재지 않음)"
    bar = (row.ratio.median, row.ratio.low, row.ratio.high, row.verdict, row.ratio.text())
    return text, note, bar


def overview(devices: list[Device], verified: list[registry.Page], url) -> str:
    rows, chart_data, labels = [], {d.title: {} for d in devices}, []
    for page in registry.load():
        for item in page.overview:
            label = _plain(f"{page.heading} · {item['label']}")
            cells = []
            for device in devices:
                text, note, bar = _overview_cell(device, page, item)
                cells.append({"text": text, "note": note})
                if bar:
                    chart_data[device.title][label] = bar
            labels.append(label)
            rows.append({"url": url(page.doc), "heading": page.heading, "label": item["label"],
                         "cells": cells})  # fmt: skip
    chart = Markup(charts.overview_chart("chart-overview", labels, chart_data)) if devices else ""
    return render(
        "overview.html",
        devices=devices,
        rows=rows,
        chart=chart,
        any_gpu=any(d.is_cuda for d in devices),
        verified=[{"url": url(p.doc), "heading": p.heading} for p in verified],
        contribute_url=url("method.md") + "#contribute",
    )


def headline_summary(view: analysis.PageView) -> str:
    """전체 결과 페이지의 대표 결과: 홈의 개요와 같은 묶음(레지스트리의 overview 첫 항목)."""
    preferred = [item["group"] for item in view.page.overview]
    groups = sorted(view.groups, key=lambda g: preferred.index(g.key) if g.key in preferred else 99)
    group = next((g for g in groups if g.headline and g.headline.ratio), None)
    return f"{group.title}: {group.headline.ratio.text()}" if group else "재지 않음"


def all_results(devices: list[Device], url) -> str:
    views = []
    for device in devices:
        pages = []
        for page in registry.load():
            view = device.view(page)
            if not device.applies(page):
                summary, state = f"해당 없음: {page.not_applicable}", "—"
            elif not view.measured:
                summary, state = "아직 재지 않음", "—"
            else:
                summary = headline_summary(view)
                state = "코드가 바뀐 뒤 다시 재지 않음" if view.stale else "측정한 코드 그대로"
                state += f" ({view.section['measured']['date'][:10]})"
            pages.append({"url": url(page.doc), "heading": page.heading, "summary": summary,
                          "state": state})  # fmt: skip
        environment = [(label, _value(device.device[key])) for key, label in DEVICE_LABELS.items()]
        views.append({"slug": device.slug, "title": device.title, "file_name": device.path.name,
                      "raw_url": url(f"results/{device.path.name}"), "environment": environment,
                      "pages": pages})  # fmt: skip
    return render("all_results.html", devices=views)


def peaks_table(devices: list[Device]) -> str:
    """GPU마다 공개된 밀집 bf16 최고 성능과 출처. 결과가 있는 GPU는 그 행을 강조합니다."""
    measured = {
        peaks.match(d.device["name"], d.device["power_limit_w"]) for d in devices if d.is_cuda
    }
    rows = [
        {"name": peak.label, "tflops": analysis.format_number(peak.bf16_dense_tflops),
         "source": peak.source, "measured": peak in measured}
        for peak in peaks.load()
    ]  # fmt: skip
    return render("peaks_table.html", rows=rows)


def pages_table(section: str, url) -> str:
    pages = [
        {"url": url(page.doc), "heading": page.heading, "summary": page.summary,
         "compares": page.compares, "requires": REQUIRES_LABELS[page.requires]}
        for page in registry.pages(section)
    ]  # fmt: skip
    return render("pages_table.html", pages=pages)


def commands_table(url) -> str:
    """페이지마다 숫자를 다시 재는 명령과 예제를 실행하는 명령입니다."""
    pages = [
        {"url": url(page.doc), "heading": page.heading, "benchmark": measure_command(page),
         "example": f".venv/bin/python snippets/{page.snippet}.py --device cuda",
         "requires": REQUIRES_LABELS[page.requires]}
        for page in registry.load()
    ]  # fmt: skip
    return render("commands_table.html", pages=pages)
