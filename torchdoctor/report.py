"""보고서: 규칙의 결과를 데이터(JSON)와 한국어 글로. torch를 가져오지 않습니다.

찾은 것은 잰 이득(고친 것을 잰 비율 × 그 몫)이 큰 순서, 잰 것이 없으면 몫(스텝에서 이길 수 있는
가장 큰 몫)이 큰 순서로 놓습니다. 확인했고 괜찮은 것과 볼 수 없었던 것도 함께 씁니다.
"""

from __future__ import annotations

import json
import os
import statistics

from torchdoctor import pages, where
from torchdoctor.catalog import BY_KEY, RULES
from torchdoctor.words import format_seconds

VERSION = 1
OUTCOMES = {
    "finished": "작업이 끝까지 돌았습니다.",
    "exited": "작업이 sys.exit로 끝났습니다.",
    "raised": "작업이 예외로 멈췄습니다. 멈추기 전까지 잰 것입니다.",
    "interrupted": "Ctrl-C로 멈췄습니다. 그때까지 잰 것입니다.",
}


def payoff(item: dict) -> float | None:
    """잰 이득: 고친 것이 빠르다고 판정됐으면 스텝에서 아끼는 몫(몫 × (1 − 1/비율))."""
    measured = item.get("measured")
    if measured and measured.get("verdict") == "faster" and item.get("share") is not None:
        return item["share"] * (1 - 1 / measured["ratio"])
    return None


def measured_without_gain(item: dict) -> bool:
    """고친 것을 이 작업에서 재 봤는데 빨라지지 않았는지(느려짐, 차이 없음, 판정 보류)."""
    measured = item.get("measured")
    return bool(measured) and measured.get("verdict") != "faster"


# 잰 결과가 빨라지지 않은 제안에 붙이는 말: 짐작(몫)보다 이 작업에서 잰 것이 앞섭니다.
NO_GAIN = {
    "slower": "이 작업에서 재 보니 고친 쪽이 느렸습니다. 지금 설정을 그대로 두세요.",
    "same": "이 작업에서 재 보니 차이가 5%보다 작았습니다. 바꿀 까닭이 없습니다.",
    "inconclusive": "이 작업에서 재 본 결과로는 판정을 보류합니다. 더 긴 작업에서 다시 재 보세요.",
}


def rank(findings: list[dict]) -> list[dict]:
    def key(item):
        gain = payoff(item)
        if gain is not None:
            return (0, -gain)
        if measured_without_gain(item):
            return (3, 0.0)  # 재 봤더니 값을 하지 않은 제안은 맨 뒤로
        if item.get("share") is not None:
            return (1, -item["share"])
        return (2, 0.0)

    return sorted(findings, key=key)


def build(ev: dict, checks: dict, notes: list[str]) -> dict:
    """보고서 데이터. findings의 항목마다 page, file, line, share, measured, message가 있습니다."""
    findings, fine, skipped = [], [], []
    for rule in RULES:
        check = checks.get(rule.key)
        if check is None:
            continue
        for item in check.findings:
            item = dict(item, file=where.short(item["file"]))
            item.update(page_title=pages.title(item["page"]), url=pages.url(item["page"]))
            findings.append(item)
        if not check.findings and check.fine:
            fine.append(
                {"rule": rule.key, "page": rule.page, "title": rule.title, "note": check.fine}
            )
        if check.skipped:
            skipped.append(
                {
                    "rule": rule.key,
                    "page": rule.page,
                    "title": rule.title,
                    "why": check.skipped,
                    "cuda_only": rule.cuda_only,
                }
            )
    step_s = ev.get("step_s") or []
    steps = {
        "seen": ev.get("steps_seen", 0),
        "skipped": min(ev.get("skip_steps") or 0, ev.get("steps_seen", 0)),  # 실제로 건너뛴 수
        "probe": ev.get("call_steps", 0),
        "window": len(step_s),
        "window_wanted": ev.get("window_steps"),
        "median_step_s": statistics.median(step_s) if step_s else None,
        "data_share": round(sum(ev["data_s"]) / sum(step_s), 4) if step_s and sum(step_s) else None,
    }
    gpu_step_s = ev.get("gpu_step_s") or []
    if sum(gpu_step_s) > 0:  # CUDA: 같은 창을 GPU 시계로(배치를 기다리느라 GPU가 쉰 몫)
        steps["gpu_data_share"] = round(sum(ev.get("gpu_data_s") or []) / sum(gpu_step_s), 4)
    return {
        "tool": "torchdoctor",
        "version": VERSION,
        "script": ev.get("script"),
        "device": ev.get("device"),
        "gpu": ev.get("gpu"),
        "torch": ev.get("torch"),
        "rank": ev.get("rank"),
        "outcome": ev.get("outcome"),
        "steps": steps,
        "findings": rank(findings),
        "fine": fine,
        "not_checked": skipped,
        "notes": notes,
        "errors": ev.get("errors") or [],
    }


def write_json(report: dict, path: str) -> str:
    """보고서를 JSON으로 씁니다(반쯤 쓴 파일이 남지 않게 임시 파일을 바꿔 넣습니다)."""
    rank_info = report.get("rank")
    if rank_info and rank_info["rank"] != 0:
        root, ext = os.path.splitext(path)
        path = f"{root}.rank{rank_info['rank']}{ext or '.json'}"
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(report, handle, ensure_ascii=False, indent=2)
        handle.write("\n")
    os.replace(temporary, path)
    return path


def start_cost_text(measured: dict) -> str:
    """워커를 띄우는 한 번의 비용과, 그 비용을 되찾는 배치 수(정상 상태의 비율과 따로)."""
    text = f"워커를 띄우는 한 번의 비용 {format_seconds(measured['start_s'])}"
    if measured.get("payback_batches"):
        return text + f"(배치 {measured['payback_batches']}개면 되찾습니다)"
    return text + "(정상 상태에서 빨라지지 않아 되찾지 못합니다)"


def location(item: dict) -> str:
    if item.get("file") is None:
        return "작업 전체"
    return f"{item['file']}:{item['line']}"


def _header(report: dict) -> list[str]:
    steps = report["steps"]
    device = (report.get("gpu") or {}).get("name") or (report.get("device") or "?").upper()
    script = report.get("script") or "이 작업"
    lines = [f"== torchdoctor 진단: {script} ({device}, torch {report.get('torch')}) =="]
    if report.get("rank"):
        r = report["rank"]
        lines.append(
            f"torchrun 프로세스 {r['world_size']}개 가운데 순위(rank) {r['rank']} 프로세스가 본 "
            "것입니다. 다른 순위는 각자의 보고서를 씁니다."
        )
    lines.append(OUTCOMES.get(report.get("outcome"), ""))
    summary = (
        f"스텝: 본 것 {steps['seen']}개, 건너뛴 워밍업 {steps['skipped']}개,"
        f" 탐침 {steps['probe']}개,"
        f" 시간 창 {steps['window']}/{steps['window_wanted']}개"
    )
    if steps.get("median_step_s"):
        summary += f", 스텝 중앙값 {format_seconds(steps['median_step_s'])}"
    if steps.get("gpu_data_share") is not None:
        summary += (
            f", 배치를 기다린 몫 {steps['gpu_data_share']:.0%}(GPU 시계)"
            f"·{steps['data_share'] or 0:.0%}(호스트 시계)"
        )
    elif steps.get("data_share") is not None:
        summary += f", 배치를 기다린 몫 {steps['data_share']:.0%}"
    lines.append(summary)
    return lines + [f"알림: {note}" for note in report.get("notes") or []]


def _details(item: dict) -> list[str]:
    details = []
    if item.get("share") is not None:
        details.append(f"스텝에서 이길 수 있는 몫 최대 {item['share']:.0%}")
    measured = item.get("measured")
    if measured:
        details.append(
            f"고친 것을 이 작업의 데이터로 잰 결과({measured['what']}): {measured['text']}"
        )
        if measured.get("start_s") is not None:
            details.append(start_cost_text(measured))
        if measured_without_gain(item):
            details.append(NO_GAIN.get(measured.get("verdict"), NO_GAIN["inconclusive"]))
    elif item.get("fix_note"):
        details.append(f"고친 것을 재지 않은 이유: {item['fix_note']}")
    if item.get("unverified"):
        details.append(item["unverified"])
    return details


def _finding(number: int, item: dict) -> list[str]:
    lines = [f"{number}. {item['title']} — {location(item)}", f"   {item['message']}"]
    lines.append(f"   · 페이지: {pages.label(item['page'])}")
    return lines + [f"   · {detail}" for detail in _details(item)]


def _listing(title: str, items: list[dict], key: str) -> list[str]:
    if not items:
        return []
    rows = [f" - {item['title']}: {item[key]} [{pages.title(item['page'])}]" for item in items]
    return ["", title, *rows]


def text(report: dict) -> str:
    """터미널(표준 오류)에 쓰는 한국어 보고서."""
    findings = report["findings"]
    lines = _header(report)
    order = " (잰 이득, 그다음 몫이 큰 순서)" if findings else ""
    lines += ["", f"찾은 것 {len(findings)}개{order}"]
    for number, item in enumerate(findings, 1):
        lines += _finding(number, item)
    lines += _listing("확인했고 괜찮은 것", report["fine"], "note")
    lines += _listing("이 작업에서 보지 못한 것", report["not_checked"], "why")
    lines += [f"진단기 오류(작업에는 영향 없음): {error}" for error in report.get("errors") or []]
    return "\n".join(lines) + "\n"


class Report(dict):
    """보고서 데이터(dict). str()은 한국어 글, .json(path)은 파일로."""

    def __str__(self) -> str:
        return text(self)

    def json(self, path: str) -> str:
        return write_json(self, path)

    @property
    def findings(self) -> list[dict]:
        return self["findings"]

    def pages(self) -> set[str]:
        return {item["page"] for item in self["findings"]}

    def rule_keys(self) -> set[str]:
        return {item["rule"] for item in self["findings"]}


def rule_title(key: str) -> str:
    return BY_KEY[key].title
