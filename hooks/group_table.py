"""비교 묶음 하나의 표: 열(중앙값, 기준 대비, 앞 단계 대비, 지표, 천장, MFU)과 행, 결론 문장.

hooks/templates/group_table.html이 그립니다.
"""

from __future__ import annotations

from dataclasses import dataclass

from guide import peaks
from report import analysis, conclusions, formatting
from torchdoctor.words import format_seconds


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


def role_label(row: analysis.Row) -> str:
    """역할 칸: 권장 방식이라도 이 장치에서 빨라지지 않았으면 "권장"이라고 쓰지 않습니다."""
    if row.role == "recommended" and row.ratio and row.verdict != "faster":
        return analysis.ROLE_LABELS["other"]
    return analysis.ROLE_LABELS[row.role]


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
            role_label(row),
            "계산값" if row.computed else format_seconds(row.entry["median_s"]),
        ]
        if compared:
            cells.append(conclusions.ratio_cell(row, device, page) if not row.computed else "—")
        if chained:
            cells.append(conclusions.previous_cell(row, device, page) if row.previous else "—")
        cells += [formatting.format_number(shown[n]) if n in shown else "—" for n in metric_names]
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
