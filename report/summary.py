"""`pytest --benchmark`가 끝에 출력하는 페이지별 한국어 요약과, 다시 재야 하는 결과의 목록."""

from __future__ import annotations

from pathlib import Path

from guide import registry
from report import analysis, conclusions, curve_sentences, formatting
from results_format import results_file
from results_format.validation import ResultsError
from torchdoctor.words import format_seconds


def describe_row(row: analysis.Row) -> str:
    parts = [row.label]
    if not row.computed:
        parts.append(format_seconds(row.entry["median_s"]))
    for name, value in row.shown_metrics().items():
        label, unit, rate = analysis.METRIC_DISPLAY[name]
        shown = f"{formatting.format_number(value)} {unit}".strip()
        parts.append(shown if rate else f"{label} {shown}")
    if row.ceiling_percent is not None:
        parts.append(f"천장 대비 {row.ceiling_percent:.0f}%")
    return ", ".join(parts)


def lines(doc: dict) -> list[str]:
    device = doc["device"]
    found = [f"측정 장치: {results_file.device_title(device)}, torch {device['torch']}"]
    for view in analysis.analyze(doc).values():
        if not view.measured:
            continue
        found.append(view.page.heading)
        for group in view.groups:
            rounds = f", 라운드 {group.info['rounds']}번" if group.info else ""
            found.append(f"  {group.title} — {group.work()}당{rounds}")
            for row in group.rows:
                ratio = conclusions.ratio_cell(row, device, view.page)
                compared = f" · 기준 대비 {ratio}" if row.role != "baseline" and row.ratio else ""
                role = analysis.ROLE_LABELS[row.role]
                found.append(f"    [{role}] {describe_row(row)}{compared}")
            found.append(f"    → {conclusions.conclusion(group, device)}")
        for key, points in view.sweeps().items():
            spec = view.page.sweep(key)
            found.append(f"  스윕 {spec.x_label}: {curve_sentences.sweep_sentence(spec, points)}")
        for result in view.break_evens():
            found.append(f"  본전: {curve_sentences.break_even_sentence(result)}")
        for title, reason in view.not_measured:
            found.append(f"  재지 않음({title}): {reason}")
    return found


def stale_lines(root: Path) -> list[str]:
    """`results/`에서 측정한 뒤 코드가 바뀐 페이지(와 읽을 수 없는 결과 파일)를 알리는 줄들."""
    found = []
    for path in results_file.published_files(root):
        try:
            doc = results_file.load_published(path)
        except ResultsError as error:
            found.append(str(error))
            continue
        for page_id, changes in sorted(analysis.provenance.stale_pages(doc).items()):
            described = ", ".join(f"{source}({state})" for source, state in changes.items())
            heading = registry.by_id(page_id).heading
            found.append(f"{path.name} · {heading}: 측정한 뒤 코드가 바뀌었습니다: {described}")
    return found
