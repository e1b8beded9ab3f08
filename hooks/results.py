"""빌드 시점 렌더링: `results/*.json`의 측정 결과를 페이지에 표와 차트로 그립니다.

이 훅은 결과 파일을 읽어서 그리기만 하고, 절대 측정하지 않습니다. 페이지의 표시 자리:

- `<!-- results: tipN -->`: 팁 페이지. 장치마다 헤드라인(속도 향상), 오래된 결과 표시, 표, 차트,
  측정 환경. 재지 않은 항목은 이유와 함께 보여 줍니다.
- `<!-- results: tipN not-measurable -->`: 측정할 수 없는 팁. 결과가 없어도 경고하지 않습니다.
- `<!-- results: overview -->`: 홈의 전체 차트.  `<!-- results: all -->`: 전체 결과 페이지.

결과 파일이 깨졌으면 파일과 항목을 짚어 빌드를 멈춥니다. 결과가 없는 팁 페이지와 페이지가 없는
팁의 결과는 경고라서 `mkdocs build --strict`가 실패합니다.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/(결과 형식)와 hooks/charts.py를 가져오려고 넣습니다.
    sys.path.insert(0, str(ROOT))

from benchmarks import analysis, results_file  # noqa: E402
from hooks import charts  # noqa: E402

log = logging.getLogger("mkdocs.hooks.results")

MARKER = re.compile(
    r"^<!--\s*results:\s*(?P<target>tip\d+|overview|all)(?P<flag>\s+not-measurable)?\s*-->[ \t]*$",
    re.MULTILINE,
)
ROLE_LABELS = {
    "baseline": "느린 방식(기준)",
    "fast": "빠른 방식",
    "other": "비교",
    "ceiling": "천장",
}
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
    "cpu_cores": "CPU 코어",
    "usable_cores": "쓸 수 있는 코어",
    "torch_threads": "torch 스레드",
    "torch_interop_threads": "torch interop 스레드",
    "tf32_matmul": "TF32 행렬 곱(기본값)",
    "tf32_cudnn": "TF32 cuDNN(기본값)",
    "float32_matmul_precision": "float32 행렬 곱 정밀도",
    "date": "측정 시각(UTC)",
    "commit": "커밋",
    "dirty": "커밋되지 않은 변경",
    "pytest_benchmark": "pytest-benchmark",
}


@dataclass
class Device:
    """결과 파일 하나: 장치 하나의 측정입니다."""

    path: Path
    doc: dict
    stale: dict[str, list[str]]

    @property
    def slug(self) -> str:
        return self.path.stem

    @property
    def env(self) -> dict:
        return self.doc["environment"]

    @property
    def title(self) -> str:
        env = self.env
        if env["device_kind"] == "cuda":
            return env["device_name"]
        return f"CPU {env['usable_cores']}코어 ({env['cpu_model']})"


# 빌드 한 번 동안의 상태: 결과 파일과, 페이지의 표시 자리가 가리키는 팁.
devices: list[Device] = []
tip_pages: dict[str, str] = {}
unmeasurable: set[str] = set()


def load_devices(root: Path) -> list[Device]:
    loaded = []
    for path in results_file.published_files(root):
        try:
            doc = results_file.load(path)
        except results_file.ResultsError as error:
            raise PluginError(str(error)) from None
        if doc["dry_run"]:
            problem = "드라이 런 결과는 results/에 둘 수 없습니다(숫자가 아니라 흐름 확인용입니다)"
            raise PluginError(str(results_file.ResultsError(path, "dry_run", problem)))
        loaded.append(Device(path, doc, results_file.stale_snippets(doc, root)))
    # GPU 결과를 먼저 보여 줍니다(발행하는 숫자의 중심). 그다음 CPU.
    return sorted(loaded, key=lambda d: (d.env["device_kind"] != "cuda", d.slug))


# --- MkDocs 이벤트 ------------------------------------------------------------------------------


def on_files(files, config):
    """결과 파일을 읽고, 페이지들이 어느 팁의 결과를 보여 주는지 미리 모읍니다.

    홈(index.md)은 팁 페이지보다 먼저 그려지므로, 팁 페이지의 위치를 여기서 알아 둡니다.
    원본 결과 파일은 사이트에 그대로 복사해 페이지에서 내려받을 수 있게 합니다.
    """
    global devices
    devices = load_devices(Path(config["config_file_path"]).parent)
    tip_pages.clear()
    unmeasurable.clear()
    for file in files.documentation_pages():
        for match in MARKER.finditer(file.content_string):
            if match["target"].startswith("tip"):
                tip_pages[match["target"]] = file.src_uri
                if match["flag"]:
                    unmeasurable.add(match["target"])
    for device in devices:
        uri = f"results/{device.path.name}"
        files.append(File.generated(config, uri, abs_src_path=str(device.path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    def render(match: re.Match[str]) -> str:
        target = match["target"]
        if target == "overview":
            return render_overview(page.file.src_uri)
        if target == "all":
            return render_all(page.file.src_uri)
        return render_tip(target, page.file.src_uri)

    return MARKER.sub(render, markdown)


def on_env(env, config, files):
    # 모든 페이지를 그린 뒤: 보여 줄 페이지가 없는 팁의 결과를 알립니다.
    for device in devices:
        for tip in analysis.measured_tips(device.doc):
            if tip not in tip_pages:
                log.warning(
                    f"{device.path.relative_to(ROOT)}: {tip}의 결과가 있지만 "
                    f"`<!-- results: {tip} -->`를 둔 페이지가 없습니다"
                )
    return env


# --- 그리기 -------------------------------------------------------------------------------------


def link(from_page: str, to: str) -> str:
    """docs/ 안의 한 파일에서 다른 파일로 가는 상대 경로(MkDocs가 검사하고 바꿔 줍니다)."""
    depth = from_page.count("/")
    return "../" * depth + to


def render_tip(tip: str, page_uri: str) -> str:
    shown = [device for device in devices if tip in analysis.measured_tips(device.doc)]
    if not shown and tip not in unmeasurable:
        log.warning(f"{page_uri}: {tip}의 측정 결과가 results/에 없습니다")
    if not shown:
        return '!!! info "측정 결과 없음"\n    이 팁의 측정 결과는 아직 `results/`에 없습니다.\n'
    return "\n".join(render_device_tip(device, tip, page_uri) for device in shown)


def render_device_tip(device: Device, tip: str, page_uri: str) -> str:
    parts = [f"### {device.title} {{ #results-{device.slug} }}", ""]
    parts += headline_block(device, tip)
    parts += stale_block(device, tip)
    if device.env["device_kind"] == "cpu":
        parts += [
            '!!! note "CPU에서 잰 결과"',
            f"    GPU가 아니라 {device.env['usable_cores']}코어 CPU에서 잰 숫자입니다."
            " 절대 시간보다 느린 방식과 빠른 방식의 비율을 보세요.",
            "",
        ]
    groups = analysis.groups_for(device.doc, tip)
    if groups:
        for group in groups:
            parts += results_table(group)
        chart = chart_block(device, tip, groups)
        if chart:
            parts += [chart, ""]
    parts += report_blocks(groups)
    parts += not_measured_block(device, tip)
    parts += [provenance(device, page_uri), ""]
    return "\n".join(parts)


def headline_block(device: Device, tip: str) -> list[str]:
    found = analysis.headline(device.doc, tip)
    if not found:
        return []
    group, speedup = found
    fast, baseline = group.with_role("fast").entry, group.with_role("baseline").entry
    compared = f"{group.name}: `{baseline['variant']}` → `{fast['variant']}`"
    if group.within_noise:
        return [
            f'!!! info "차이 없음: {analysis.format_ratio(speedup)}"',
            f"    {compared}. 중앙값의 차이가 측정의 흔들림(IQR)보다 작아서, 이 장치에서는 두"
            " 방식이 다르다고 말할 수 없습니다.",
            "",
        ]
    # 빠른 방식이 이 장치에서는 더 느렸다면 성공 표시(초록)가 아니라 경고로 보여 줍니다.
    kind, word = ("success", "속도 향상") if speedup >= 1 else ("warning", "오히려 느려짐")
    return [
        f'!!! {kind} "{word} {analysis.format_ratio(speedup)}"',
        f"    {compared} (중앙값 기준, 같은 실행에서 잼).",
        "",
    ]


def stale_block(device: Device, tip: str) -> list[str]:
    changed = device.stale.get(tip)
    if not changed:
        return []
    names = ", ".join(f"`{path}`" for path in changed)
    return [
        '!!! warning "코드가 바뀐 뒤 다시 측정되지 않았습니다"',
        f"    측정한 뒤에 {names}이(가) 바뀌었습니다. 아래 숫자는 바뀌기 전 코드의 것입니다."
        " `pytest --benchmark --publish`로 다시 재면 이 표시가 사라집니다.",
        "",
    ]


def results_table(group: analysis.Group) -> list[str]:
    """비교 묶음 하나의 표입니다. 값이 하나도 없는 열(기준 대비, 천장 대비)은 뺍니다."""
    rows = group.rows
    columns = ["방식", "역할", "중앙값", "IQR", "측정값"]
    relative = any(row.relative_speed for row in rows)
    ceiling = any(row.ceiling_percent is not None for row in rows)
    columns += ["기준 대비"] * relative + ["천장 대비"] * ceiling
    align = {"중앙값": "--:", "IQR": "--:", "기준 대비": "--:", "천장 대비": "--:"}
    lines = [
        f"**{group.name}**",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "|".join(align.get(name, "---") for name in columns) + "|",
    ]
    for row in rows:
        entry = row.entry
        metrics = ", ".join(analysis.format_metric(k, v) for k, v in entry["metrics"].items())
        cells = [
            f"`{entry['variant']}`",
            ROLE_LABELS[entry["role"]],
            analysis.format_seconds(entry["median_s"]),
            analysis.format_seconds(entry["iqr_s"]),
            metrics or "—",
        ]
        if relative:
            cells.append(analysis.format_ratio(row.relative_speed) if row.relative_speed else "—")
        if ceiling:
            percent = row.ceiling_percent
            cells.append(f"{percent:.0f}%" if percent is not None else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def chart_block(device: Device, tip: str, groups: list[analysis.Group]) -> str | None:
    series = [
        (
            group.name,
            [
                (row.entry["variant"], row.entry["role"], row.relative_speed)
                for row in group.rows
                if row.relative_speed is not None
            ],
        )
        for group in groups
        if group.with_role("baseline")
    ]
    series = [(name, bars) for name, bars in series if len(bars) > 1]
    if not series:
        return None
    title = f"{analysis.TIP_TITLES.get(tip, tip)} — {device.title}"
    svg = charts.relative_speed_chart(f"chart-{tip}-{device.slug}", title, series)
    return f'<figure class="result-chart" markdown="0">\n{svg}\n</figure>'


def report_blocks(groups: list[analysis.Group]) -> list[str]:
    lines = []
    for group in groups:
        for row in group.rows:
            excerpt = row.entry.get("extra", {}).get("report_excerpt")
            if excerpt:
                # Lightning 보고서는 탭으로 열을 맞춥니다. 코드 블록 안에서도 줄이 맞게 폅니다.
                report = [f"    {line}" for line in excerpt.expandtabs(4).splitlines()]
                lines += [f'??? note "`{row.entry["variant"]}`의 보고서(측정한 실행에서 캡처)"']
                lines += ["    ```text", *report]
                lines += ["    ```", ""]
    return lines


def not_measured_block(device: Device, tip: str) -> list[str]:
    reasons = analysis.skip_reasons(device.doc, tip)
    if not reasons:
        return []
    lines = ['!!! info "이 장치에서 재지 않은 것"']
    for keys, reason in reasons:
        lines.append(f"    - {', '.join(f'`{key}`' for key in keys)}: {reason}")
    return lines + [""]


def provenance(device: Device, page_uri: str) -> str:
    env = device.env
    versions = [f"torch {env['torch']}"]
    versions += [
        f"{name} {env[key]}" for key, name in (("cuda", "CUDA"), ("cudnn", "cuDNN")) if env[key]
    ]
    if env["driver"]:
        versions.append(f"드라이버 {env['driver']}")
    commit = f"커밋 `{env['commit'][:10]}`" if env["commit"] else "커밋 정보 없음"
    if env["dirty"]:
        commit += "(커밋되지 않은 변경이 있는 상태)"
    raw = link(page_uri, f"results/{device.path.name}")
    return (
        f"<small>측정: {device.title} · {' · '.join(versions)} · Python {env['python']} · "
        f"{env['date'][:10]} · {commit} · [원본 결과 파일]({raw}) · "
        f"[측정 환경 전체]({link(page_uri, 'results.md')}#{device.slug})</small>"
    )


def headline_text(group: analysis.Group, speedup: float) -> str:
    """헤드라인 배수. 차이가 측정의 흔들림 안이면 그렇다고 붙입니다."""
    return analysis.format_ratio(speedup) + (" (잡음 범위)" if group.within_noise else "")


def render_overview(page_uri: str) -> str:
    if not devices:
        return '!!! info "측정 결과 없음"\n    `results/`에 아직 결과 파일이 없습니다.\n'
    tips = sorted(tip_pages, key=lambda tip: (len(tip), tip))
    table = ["| 팁 | " + " | ".join(d.title for d in devices) + " |"]
    table.append("|---|" + "---|" * len(devices))
    speedups: dict[str, dict[str, list]] = {device.title: {} for device in devices}
    for tip in tips:
        title = analysis.TIP_TITLES.get(tip, tip)
        cells = []
        for device in devices:
            found = analysis.headline(device.doc, tip)
            if found:
                text = headline_text(*found)
                speedups[device.title][title] = [found[1], text]
                stale = " (코드가 바뀐 뒤 재지 않음)" if tip in device.stale else ""
                cells.append(text + stale)
            else:
                cells.append("재지 않음")
        target = link(page_uri, tip_pages[tip]) + "#results"
        table.append(f"| [{title}]({target}) | " + " | ".join(cells) + " |")
    labels = [analysis.TIP_TITLES.get(tip, tip) for tip in tips]
    svg = charts.overview_chart("chart-overview", labels, speedups)
    return "\n".join(
        [f'<figure class="result-chart" markdown="0">\n{svg}\n</figure>', "", *table, ""]
    )


def render_all(page_uri: str) -> str:
    if not devices:
        return '!!! info "측정 결과 없음"\n    `results/`에 아직 결과 파일이 없습니다.\n'
    parts = []
    for device in devices:
        parts += [f"## {device.title} {{ #{device.slug} }}", ""]
        raw = link(page_uri, f"results/{device.path.name}")
        parts += [f"원본 결과 파일: [`results/{device.path.name}`]({raw})", ""]
        parts += ["| 항목 | 값 |", "|---|---|"]
        for key, label in ENVIRONMENT_LABELS.items():
            value = device.env[key]
            shown = "예" if value is True else "아니요" if value is False else value
            parts.append(f"| {label} | {'—' if shown is None else shown} |")
        parts += ["", "| 팁 | 대표 결과 | 코드와 결과 |", "|---|---|---|"]
        for tip in analysis.measured_tips(device.doc):
            found = analysis.headline(device.doc, tip)
            summary = f"속도 향상 {headline_text(*found)}" if found else "재지 않음"
            state = "코드가 바뀐 뒤 다시 재지 않음" if tip in device.stale else "측정한 코드 그대로"
            title = analysis.TIP_TITLES.get(tip, tip)
            if tip in tip_pages:
                title = f"[{title}]({link(page_uri, tip_pages[tip])}#results)"
            parts.append(f"| {title} | {summary} | {state} |")
        parts.append("")
    return "\n".join(parts)
