"""사이트 전체의 표: 홈의 개요, 전체 결과, GPU 최고 성능, 페이지 목록, 명령 목록.

숫자는 benchmarks/analysis.py가, 문장은 benchmarks/conclusions.py가, 그림은 hooks/charts.py가
만들고, 여기서는 보여 줄 값을 골라 템플릿(hooks/templating.py)에 넘깁니다.
"""

from __future__ import annotations

from guide import peaks, registry
from hooks import charts
from hooks.results_data import Device
from hooks.templating import REQUIRES_LABELS, Chart, Url, measure_command, plain, render
from report import analysis, conclusions, formatting
from torchdoctor.words import ratio_text

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


def _value(value) -> str:
    if isinstance(value, bool):
        return "예" if value else "아니요"
    if isinstance(value, list):
        return ", ".join(value) or "없음"
    return "—" if value is None else str(value)


def _overhead_cell(group: analysis.Group) -> tuple[str, tuple | None]:
    """도구를 켠 비용 묶음의 칸: 가장 느린 것, 모두 ±5% 안이면 차이 없음."""
    others = [row for row in group.rows if row.role != "baseline" and row.ratio]
    if others and all(row.verdict == "same" for row in others):
        return "차이 없음 (모두 ±5% 안)", (1.0, 1.0, 1.0, "same", "차이 없음")
    worst = group.costliest or min(others, key=lambda row: row.ratio.median, default=None)
    if worst is None:
        return "아직 재지 않음", None
    label = "가장 비싼 것" if worst.verdict == "slower" else "가장 느린 것"
    text = f"{label}: {plain(worst.label)} {ratio_text(worst.ratio)}"
    return text, (worst.ratio.median, worst.ratio.low, worst.ratio.high, worst.verdict, text)


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
    notes = [item["note"]] if item.get("note") else []
    if group.baseline and item.get("show_baseline"):
        notes.append(f"기준: {plain(group.baseline.label)}")
    note = " · ".join(notes)
    if group.spec.conclusion == "overhead":
        text, bar = _overhead_cell(group)
        return text, note, bar
    row = group.headline
    if not (row and row.ratio):
        return "아직 재지 않음", note, None
    text = ratio_text(row.ratio)
    if item.get("value") == "saving" and conclusions.saving_text(group):
        # 배수는 에폭의 길이에 달렸으므로 아낀 시간을 먼저 씁니다(더 나아가기 11).
        text = f"{conclusions.saving_text(group)} 절약 ({text})"
    if view.stale:
        text += " (코드가 바뀐 뒤 재지 않음)"
    bar = (row.ratio.median, row.ratio.low, row.ratio.high, row.verdict, ratio_text(row.ratio))
    return text, note, bar


def overview(devices: list[Device], verified: list[registry.Page], url: Url, chart: Chart) -> str:
    rows, chart_data, labels = [], {d.title: {} for d in devices}, []
    for page in registry.load():
        for item in page.overview:
            label = plain(f"{page.heading} · {item['label']}")
            cells = []
            for device in devices:
                text, note, bar = _overview_cell(device, page, item)
                cells.append({"text": text, "note": note})
                if bar:
                    chart_data[device.title][label] = bar
            labels.append(label)
            rows.append({"url": url(page.doc), "heading": page.heading, "label": item["label"],
                         "cells": cells})  # fmt: skip
    figure = chart(charts.overview_chart("chart-overview", labels, chart_data)) if devices else ""
    return render(
        "overview.html",
        devices=devices,
        rows=rows,
        chart=figure,
        any_gpu=any(d.is_cuda for d in devices),
        verified=[{"url": url(p.doc), "heading": p.heading} for p in verified],
        contribute_url=url("method.md") + "#contribute",
        reference_cpu=next((d.column_title for d in devices if not d.is_cuda), "CPU"),
        results_url=url("results.md"),
    )


def measured_groups(view: analysis.PageView) -> str:
    """전체 결과 페이지의 '잰 것': 묶음의 이름만 씁니다. 배수는 홈의 표와 각 페이지에 있습니다."""
    titles = [group.title for group in view.groups]
    return f"묶음 {len(titles)}개: " + ", ".join(titles) if titles else "재지 않음"


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
                summary = measured_groups(view)
                state = "코드가 바뀐 뒤 다시 재지 않음" if view.stale else "측정한 코드 그대로"
                state += f" ({view.section['measured']['date'][:10]})"
            pages.append({"url": url(page.doc) + "#results", "heading": page.heading,
                          "summary": summary,
                          "state": state})  # fmt: skip
        environment = [(label, _value(device.device[key])) for key, label in DEVICE_LABELS.items()]
        views.append({"slug": device.slug, "title": device.column_title,
                      "file_name": device.path.name, "raw_url": url(f"results/{device.path.name}"),
                      "environment": environment, "pages": pages})  # fmt: skip
    return render("all_results.html", devices=views)


def peaks_table(devices: list[Device]) -> str:
    """GPU마다 공개된 밀집 bf16 최고 성능과 출처. 결과가 있는 GPU는 그 행을 강조합니다."""
    measured = {
        peaks.match(d.device["name"], d.device["power_limit_w"]) for d in devices if d.is_cuda
    }
    rows = [
        {"name": peak.label, "tflops": formatting.format_number(peak.bf16_dense_tflops),
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
