"""측정 결과와 레지스트리를 자동 이스케이프하는 Jinja 템플릿(hooks/templates/)으로 HTML로 그립니다.

결과 파일의 글자(장치 이름, 이유, 보고서)는 바깥 데이터라서 모두 이스케이프하고, Markdown이 다시
해석하지 않도록 HTML 블록 하나로 내보냅니다. 여기서는 보여 줄 값을 고르고 이름을 붙이기만 하고,
숫자 계산은 benchmarks/analysis.py가, 그림은 hooks/charts.py가 합니다.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from benchmarks import analysis
from guide import registry
from hooks import charts
from hooks.results_data import Device

TEMPLATES = Path(__file__).with_name("templates")
REQUIRES_LABELS = {"any": "CPU 또는 GPU", "cuda": "CUDA GPU", "multi-gpu": "GPU 2개 이상"}
ENVIRONMENT_LABELS = {
    "device_name": "장치",
    "device_count": "GPU 수",
    "driver": "NVIDIA 드라이버",
    "torch": "torch",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "lightning": "Lightning",
    "python": "Python",
    "platform": "운영체제",
    "cpu_model": "CPU",
    "cpu_flags": "CPU 명령어 확장(bf16·행렬 곱 관련)",
    "cpu_cores": "CPU 코어",
    "usable_cores": "쓸 수 있는 코어",
    "torch_threads": "torch 스레드",
    "torch_interop_threads": "torch interop 스레드",
    "tf32_matmul": "TF32 행렬 곱(기본값)",
    "tf32_cudnn": "TF32 cuDNN 합성곱(기본값)",
    "float32_matmul_precision": "float32 행렬 곱 정밀도",
    "date": "측정 시각(UTC)",
    "commit": "커밋",
    "dirty": "커밋되지 않은 변경",
    "pytest_benchmark": "pytest-benchmark",
}


def _code(text: object) -> Markup:
    """이스케이프한 다음 `백틱`으로 감싼 부분만 <code>로 바꿉니다(이스케이프가 먼저라 안전)."""
    escaped = str(escape(text))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


ENV = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    keep_trailing_newline=False,
)
ENV.filters["code"] = _code


def render(template: str, **context) -> str:
    """템플릿을 그리고 빈 줄을 없앱니다. 빈 줄이 있으면 Markdown이 HTML 블록을 끊습니다."""
    html = ENV.get_template(template).render(**context)
    return "\n".join(line for line in html.splitlines() if line.strip()) + "\n"


# --- 표 -----------------------------------------------------------------------------------------


@dataclass
class Column:
    header: str
    numeric: bool = False


@dataclass
class RowView:
    role: str
    cells: list[str]


@dataclass
class GroupView:
    title: str
    columns: list[Column]
    rows: list[RowView]
    conclusion: str


def group_view(group: analysis.Group, env: dict) -> GroupView:
    metric_names = [
        name
        for name in analysis.METRIC_DISPLAY
        if any(name in r.shown_metrics() for r in group.rows)
    ]
    relative = any(row.relative_speed is not None for row in group.rows)
    ceiling = any(row.ceiling_percent is not None for row in group.rows)
    columns = [Column("방식"), Column("역할"), Column(f"중앙값({group.work()}당)", True)]
    columns.append(Column("IQR", True))
    for name in metric_names:
        label, unit, _ = analysis.METRIC_DISPLAY[name]
        columns.append(Column(f"{label}({unit})" if unit else label, True))
    columns += [Column("기준 대비(배)", True)] * relative
    columns += [Column(f"{group.spec.ceiling_label}(%)", True)] * ceiling
    rows = []
    for row in group.rows:
        entry, shown = row.entry, row.shown_metrics()
        timed = not row.computed
        cells = [
            row.label,
            analysis.ROLE_LABELS[row.role],
            analysis.format_seconds(entry["median_s"]) if timed else "계산값",
            analysis.format_seconds(entry["iqr_s"]) if timed else "—",
        ]
        cells += [analysis.format_number(shown[n]) if n in shown else "—" for n in metric_names]
        if relative:
            text = row.relative_text()
            cells.append("기준" if row.role == "baseline" else text or "—")
        if ceiling:
            percent = row.ceiling_percent
            cells.append(f"{percent:.0f}%" if percent is not None else "—")
        rows.append(RowView(row.role, cells))
    return GroupView(group.title, columns, rows, analysis.conclusion(group, env))


# --- 페이지의 결과 ------------------------------------------------------------------------------


@dataclass
class DeviceView:
    slug: str
    title: str
    is_cpu: bool
    not_applicable: str
    stale: dict[str, str]
    groups: list[GroupView] = field(default_factory=list)
    charts: list[Markup] = field(default_factory=list)
    reports: list[dict] = field(default_factory=list)
    not_measured: list[tuple[str, str]] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)
    raw_url: str = ""
    environment_url: str = ""


def _plain(label: str) -> str:
    return label.replace("`", "")


def _charts(device: Device, page: registry.Page, groups: list[analysis.Group]) -> list[Markup]:
    found = []
    series = []
    for group in groups:
        bars = [(_plain(r.label), r.role, r.relative_speed) for r in group.rows if r.relative_speed]
        if group.spec.conclusion == "waterfall" and hasattr(charts, "waterfall_chart"):
            stages = [
                (_plain(r.label), r.entry["metrics"].get("tokens_per_s", 0.0), r.ceiling_percent)
                for r in group.rows
                if r.relative_speed is not None
            ]
            name = f"chart-{page.id}-{group.key}-{device.slug}"
            found.append(Markup(charts.waterfall_chart(name, group.title, stages)))
        elif group.with_role("baseline") and len(bars) > 1:
            series.append((group.title, bars))
    if series:
        title = f"{page.heading} — {device.title}"
        name = f"chart-{page.id}-{device.slug}"
        found.insert(0, Markup(charts.relative_speed_chart(name, title, series)))
    return found


def _provenance(device: Device) -> list[str]:
    env = device.env
    items = [f"torch {env['torch']}"]
    items += [
        f"{name} {env[key]}" for key, name in (("cuda", "CUDA"), ("cudnn", "cuDNN")) if env[key]
    ]
    if env["driver"]:
        items.append(f"드라이버 {env['driver']}")
    items.append(f"Python {env['python']}")
    cpu = f"CPU {env['cpu_model']}, 코어 {env['usable_cores']}개"
    cpu += f", torch 스레드 {env['torch_threads']}개"
    flags = env.get("cpu_flags") or []
    items.append(cpu + (f", {' · '.join(flags)}" if flags else ", AVX-512 BF16·AMX 없음"))
    items.append(env["date"][:10])
    commit = f"커밋 {env['commit'][:10]}" if env["commit"] else "커밋 정보 없음"
    if env["dirty"]:
        commit += "(커밋되지 않은 변경이 있는 상태)"
    items.append(commit)
    return items


def device_view(device: Device, page: registry.Page, url: Callable[[str], str]) -> DeviceView:
    groups = analysis.groups_for(device.doc, page.id)
    view = DeviceView(
        slug=device.slug,
        title=device.title,
        is_cpu=not device.is_cuda,
        not_applicable="" if device.applies(page) else page.not_applicable,
        stale=device.stale.get(page.id, {}),
        groups=[group_view(group, device.env) for group in groups],
        charts=_charts(device, page, groups),
        not_measured=analysis.not_measured_for(device.doc, page.id),
        provenance=_provenance(device),
        raw_url=url(f"results/{device.path.name}"),
        environment_url=url("results.md") + f"#{device.slug}",
    )
    for group in groups:
        for row in group.rows:
            excerpt = row.entry.get("extra", {}).get("report_excerpt")
            if excerpt:
                view.reports.append({"label": _plain(row.label), "text": excerpt.expandtabs(4)})
    return view


def page_results(page: registry.Page, devices: list[Device], verified: bool, url) -> str:
    shown = [d for d in devices if page.id in analysis.measured_pages(d.doc) or not d.applies(page)]
    gpu_note = ""
    if page.gpu_sections and not verified:
        gpu_note = (
            "이 페이지의 GPU 경로(코드와 벤치마크)는 지금 코드 그대로 CUDA GPU에서 잰 결과 파일이 "
            "아직 없습니다. CPU에서만 실행해 확인했습니다."
        )
    return render(
        "page_results.html",
        devices=[device_view(d, page, url) for d in shown],
        gpu_note=gpu_note,
        contribute_url=url("method.md") + "#contribute",
    )


# --- 홈의 개요와 전체 결과 ----------------------------------------------------------------------


def _overview_cell(device: Device, page: registry.Page, group_key: str) -> tuple[dict, list | None]:
    """개요 표의 칸 하나와 차트 막대(배수, 글자) 하나."""
    if not device.applies(page):
        return {"text": "해당 없음", "note": page.not_applicable}, [0.0, "해당 없음"]
    group = analysis.group_by_key(device.doc, page.id, group_key)
    if group is None:
        return {"text": "재지 않음", "note": ""}, None
    if group.spec.conclusion == "overhead":
        others = [r for r in group.rows if r.role != "baseline" and r.relative_speed]
        text = ", ".join(f"{_plain(r.label)} {r.relative_text()}" for r in others)
        # 차트 막대에는 가장 비싼 도구 하나만 씁니다. 전부 쓰면 글자가 차트 밖으로 넘칩니다.
        worst = group.costliest
        cell, bar = text or "재지 않음", None
        if worst:
            label = f"가장 비싼 것: {_plain(worst.label)} {worst.relative_text()}"
            bar = [worst.relative_speed, label]
        elif others:
            bar = [1.0, analysis.NO_DIFFERENCE]
    else:
        text = group.headline_text()
        cell, bar = text or "재지 않음", [group.speedup, text] if text else None
    if page.id in device.stale:
        cell += " (코드가 바뀐 뒤 재지 않음)"
    return {"text": cell, "note": ""}, bar


def overview(devices: list[Device], verified: list[registry.Page], url) -> str:
    rows, chart_data, labels = [], {d.title: {} for d in devices}, []
    for page in registry.load():
        for item in page.overview:
            label = f"{page.heading} · {item['label']}"
            cells = []
            for device in devices:
                cell, bar = _overview_cell(device, page, item["group"])
                cells.append(
                    Markup("{}{}").format(
                        cell["text"],
                        Markup("<br><small>{}</small>").format(cell["note"])
                        if cell["note"]
                        else "",
                    )
                )
                if bar:
                    chart_data[device.title][_plain(label)] = bar
            labels.append(_plain(label))
            rows.append(
                {
                    "url": url(page.doc),
                    "heading": page.heading,
                    "label": item["label"],
                    "cells": cells,
                }
            )
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


def _environment_rows(device: Device) -> list[tuple[str, str]]:
    rows = []
    for key, label in ENVIRONMENT_LABELS.items():
        value = device.env.get(key)
        if isinstance(value, bool):
            value = "예" if value else "아니요"
        elif isinstance(value, list):
            value = ", ".join(value) or "없음"
        rows.append((label, "—" if value is None else str(value)))
    return rows


def all_results(devices: list[Device], url) -> str:
    views = []
    for device in devices:
        pages = []
        for page in registry.load():
            if page.id not in analysis.measured_pages(device.doc) and device.applies(page):
                continue
            group = next(
                (g for g in analysis.groups_for(device.doc, page.id) if g.recommended), None
            )
            if not device.applies(page):
                summary = f"해당 없음: {page.not_applicable}"
            else:
                summary = f"{group.title}: {group.headline_text()}" if group else "재지 않음"
            state = (
                "코드가 바뀐 뒤 다시 재지 않음" if page.id in device.stale else "측정한 코드 그대로"
            )
            pages.append(
                {"url": url(page.doc), "heading": page.heading, "summary": summary, "state": state}
            )
        views.append(
            {
                "slug": device.slug,
                "title": device.title,
                "file_name": device.path.name,
                "raw_url": url(f"results/{device.path.name}"),
                "environment": _environment_rows(device),
                "pages": pages,
            }
        )
    return render("all_results.html", devices=views)


def pages_table(section: str, url) -> str:
    pages = [
        {
            "url": url(page.doc),
            "heading": page.heading,
            "summary": page.summary,
            "compares": page.compares,
            "requires": REQUIRES_LABELS[page.requires],
        }
        for page in registry.pages(section)
    ]
    return render("pages_table.html", pages=pages)


def commands_table(url) -> str:
    """페이지마다 숫자를 다시 재는 명령과 예제를 실행하는 명령입니다."""
    pages = [
        {
            "url": url(page.doc),
            "heading": page.heading,
            "benchmark": f".venv/bin/python -m pytest benchmarks/{page.benchmark}.py --benchmark",
            "example": f".venv/bin/python snippets/{page.snippet}.py --device cuda",
            "requires": REQUIRES_LABELS[page.requires],
        }
        for page in registry.load()
    ]
    return render("commands_table.html", pages=pages)
