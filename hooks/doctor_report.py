"""진단기(torchdoctor)를 페이지에: 보고서 예와 규칙 상자.

- `<!-- doctor-report: results/doctor/<이름>.json -->`: 진단기가 실제로 돌며 쓴 JSON을 검사하고
  자동 이스케이프하는 템플릿으로 그립니다. 잘못된 데이터면 파일 이름을 짚은 한국어 오류로
빌드를 멈춥니다.
- 규칙이 가리키는 페이지(앞머리의 `page: <id>`)마다: 진단기가 그 페이지의 문제를 찾으면 무엇을
  알리는지, torchdoctor/catalog.py의 규칙 표에서 만든 상자. `<!-- doctor -->` 자리에, 없으면 끝에.
torch를 가져오지 않습니다(torchdoctor.catalog, torchdoctor.words는 torch 없이 돕니다).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guide import registry
from hooks.templating import render
from torchdoctor import catalog
from torchdoctor.stats import Interval
from torchdoctor.words import format_seconds, ratio_text

ROOT = Path(__file__).resolve().parents[1]
REPORT_MARKER = re.compile(r"^<!--\s*doctor-report:\s*(?P<path>[\w./-]+\.json)\s*-->[ \t]*$", re.M)
BOX_MARKER = re.compile(r"^<!--\s*doctor\s*-->[ \t]*$", re.M)
DOCTOR_DOC = "doctor/01-diagnose.md"


class BadReport(ValueError):
    """보고서 JSON이 잘못되었습니다(무엇이 잘못인지 한국어로)."""


def number_or_none(value, where: str, low: float | None = None, high: float | None = None):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadReport(f"{where}: 숫자가 아닙니다({value!r})")
    if (low is not None and value < low) or (high is not None and value > high):
        raise BadReport(f"{where}: {low}–{high} 밖의 값입니다({value!r})")
    return value


def text(value, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadReport(f"{where}: 글자가 아닙니다({value!r})")
    return value


def validate(data) -> dict:  # noqa: C901 (바깥 데이터의 필드마다 검사 하나: 갈래가 곧 규칙입니다)
    """보고서를 검사합니다. 그릴 값만 골라 돌려줍니다(나머지 필드는 그리지 않습니다)."""
    if not isinstance(data, dict) or data.get("tool") != "torchdoctor":
        raise BadReport("torchdoctor 보고서가 아닙니다(tool 필드)")
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise BadReport("findings가 목록이 아닙니다")
    pages = {rule.page for rule in catalog.RULES}
    for index, item in enumerate(findings):
        where = f"findings[{index}]"
        if not isinstance(item, dict):
            raise BadReport(f"{where}: 객체가 아닙니다")
        if item.get("page") not in pages:
            raise BadReport(f"{where}.page: 규칙 표에 없는 페이지입니다({item.get('page')!r})")
        text(item.get("message"), f"{where}.message")
        if item.get("file") is not None:
            text(item["file"], f"{where}.file")
        number_or_none(item.get("line"), f"{where}.line", 1)
        number_or_none(item.get("share"), f"{where}.share", 0, 1)
        measured = item.get("measured")
        if measured is not None:
            if not isinstance(measured, dict):
                raise BadReport(f"{where}.measured: 객체가 아닙니다")
            for key in ("ratio", "low", "high"):
                if number_or_none(measured.get(key), f"{where}.measured.{key}", 0) is None:
                    raise BadReport(f"{where}.measured.{key}: 값이 없습니다")
    for key in ("fine", "not_checked"):
        for index, item in enumerate(data.get(key) or []):
            text(item.get("title") if isinstance(item, dict) else None, f"{key}[{index}].title")
    steps = data.get("steps")
    if not isinstance(steps, dict):
        raise BadReport("steps가 객체가 아닙니다")
    number_or_none(steps.get("median_step_s"), "steps.median_step_s", 0)
    return data


def measured_text(measured: dict | None) -> str:
    if not measured:
        return "재지 않음"
    interval = Interval(
        measured["ratio"], measured["low"], measured["high"], measured.get("confidence", 0.95)
    )
    what = measured.get("what")
    return f"{what}: {ratio_text(interval)}" if isinstance(what, str) else ratio_text(interval)


def load_report(relative: str) -> dict:
    path = ROOT / relative
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadReport("파일이 없습니다") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadReport(f"JSON으로 읽을 수 없습니다({error})") from None
    return validate(data)


def report_html(relative: str, url) -> str:
    data = load_report(relative)
    titles = {page.id: page.heading for page in registry.load()}
    docs = {page.id: page.doc for page in registry.load()}
    findings = []
    for item in data["findings"]:
        where = "작업 전체" if item.get("file") is None else f"{item['file']}:{item['line']}"
        share = item.get("share")
        findings.append(
            {
                "page_title": titles.get(item["page"], item["page"]),
                "url": url(docs[item["page"]]),
                "where": where,
                "share": "—" if share is None else f"{share:.0%}",
                "measured": measured_text(item.get("measured")),
                "message": item["message"],
            }
        )
    steps = dict(data["steps"])
    if steps.get("median_step_s"):
        steps["median_step_s"] = format_seconds(steps["median_step_s"])
    device = (data.get("gpu") or {}).get("name") or str(data.get("device", "?")).upper()
    return render(
        "doctor_report.html",
        source=relative,
        device=device,
        torch=data.get("torch"),
        steps=steps,
        findings=findings,
        fine=data.get("fine") or [],
        not_checked=data.get("not_checked") or [],
    )


def box_html(page_id: str, url) -> str:
    rules = catalog.rules_for_page(page_id)
    return render(
        "doctor_box.html", rules=rules, doctor_url=url(DOCTOR_DOC), not_run=catalog.NOT_RUN_ON_GPU
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    def url(doc: str) -> str:
        found = files.get_file_from_path(doc)
        return get_relative_url(found.url if found else doc, page.file.url)

    def report(match: re.Match) -> str:
        try:
            return report_html(match["path"], url)
        except BadReport as error:
            raise PluginError(
                f"{page.file.src_uri}: 진단기 보고서 {match['path']}가 잘못되었습니다: {error}"
            ) from None

    markdown = REPORT_MARKER.sub(report, markdown)
    page_id = page.meta.get("page")
    if page_id and catalog.rules_for_page(page_id):
        box = box_html(page_id, url)
        if BOX_MARKER.search(markdown):
            markdown = BOX_MARKER.sub(lambda _: box, markdown, count=1)
        else:
            markdown = markdown.rstrip("\n") + "\n\n" + box
    return markdown
