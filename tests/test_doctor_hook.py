"""hooks/doctor_report.py: 진단기가 쓴 JSON을 검사해 그리고, 규칙이 가리키는 페이지마다 상자를
넣습니다.
잘못된 데이터는 파일 이름을 짚은 한국어 오류로 빌드를 멈추고, 바깥 글자는 이스케이프합니다(P9)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from guide import registry
from hooks import doctor_report
from torchdoctor import catalog

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "results/doctor/capstone-naive.json"


class Files:
    def get_file_from_path(self, doc):
        return SimpleNamespace(url=doc.replace(".md", ".html"))


def page(meta: dict | None = None, src="doctor/01-diagnose.md"):
    return SimpleNamespace(
        meta=meta or {}, file=SimpleNamespace(src_uri=src, url=src.replace(".md", ".html"))
    )


def render(markdown: str, meta=None) -> str:
    return doctor_report.on_page_markdown(markdown, page(meta), {}, Files())


def test_the_committed_example_report_renders_every_finding_with_its_page_link():
    data = json.loads((ROOT / EXAMPLE).read_text(encoding="utf-8"))
    html = render(f"앞\n\n<!-- doctor-report: {EXAMPLE} -->\n\n뒤")
    assert data["findings"], "예시 보고서에 찾은 것이 있어야 합니다"
    assert html.count("<tr><td>") == len(data["findings"])
    for item in data["findings"]:
        assert f"{item['file']}:{item['line']}" in html
    assert "tips/03-avoid-syncs.html" in html and "<!-- doctor-report" not in html


def test_the_example_came_from_a_run_on_the_capstone_naive_stage():
    data = json.loads((ROOT / EXAMPLE).read_text(encoding="utf-8"))
    assert data["script"] == "doctor_capstone_naive.py" and data["outcome"] == "finished"
    assert {"tip3", "tip6", "sdpa"} <= {item["page"] for item in data["findings"]}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(findings="x"), "findings가 목록이 아닙니다"),
        (lambda d: d["findings"][0].update(page="no-such"), "규칙 표에 없는 페이지"),
        (lambda d: d["findings"][0].update(share=1.5), "findings[0].share"),
        (lambda d: d["findings"][0].update(measured={"ratio": "빠름"}), "measured.ratio"),
        (lambda d: d["findings"][0].update(message=None), "findings[0].message"),
    ],
)
def test_bad_data_stops_the_build_with_a_korean_error_naming_the_file(
    tmp_path, monkeypatch, change, words
):
    data = json.loads((ROOT / EXAMPLE).read_text(encoding="utf-8"))
    broken = copy.deepcopy(data)
    change(broken)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "bad.json").write_text(json.dumps(broken), encoding="utf-8")
    monkeypatch.setattr(doctor_report, "ROOT", tmp_path)
    with pytest.raises(PluginError) as error:
        render("<!-- doctor-report: results/bad.json -->")
    assert "results/bad.json" in str(error.value) and words in str(error.value)
    assert "잘못되었습니다" in str(error.value)


def test_outside_text_is_escaped(tmp_path, monkeypatch):
    data = json.loads((ROOT / EXAMPLE).read_text(encoding="utf-8"))
    data["findings"][0]["message"] = "<script>alert(1)</script>"
    (tmp_path / "r.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(doctor_report, "ROOT", tmp_path)
    html = render("<!-- doctor-report: r.json -->")
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_every_page_a_rule_points_to_gets_the_box_from_the_rule_table():
    for rule in catalog.RULES:
        html = render("본문\n", meta={"page": rule.page})
        assert "진단기(torchdoctor)가 알려 주는 것" in html
        assert rule.title in html
    assert "진단기" not in render("본문\n", meta={"page": "capstone"})  # 규칙이 없는 페이지


def test_the_box_goes_at_the_marker_when_there_is_one():
    html = render("앞\n\n<!-- doctor -->\n\n뒤\n", meta={"page": "tip3"})
    assert html.index("진단기") < html.index("뒤")


def test_the_hook_imports_no_torch():
    code = (
        "import sys; sys.path.insert(0, 'hooks'); import hooks.doctor_report;"
        " assert 'torch' not in sys.modules"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_doctor_page_is_a_registry_page_and_uses_the_hook():
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "doctor.md" not in text  # 메뉴는 레지스트리에서 옵니다(hooks/pages.py)
    assert "hooks/doctor_report.py" in text
    assert registry.by_id("doctor").doc == doctor_report.DOCTOR_DOC
    assert f"<!-- doctor-report: {EXAMPLE} -->" in (
        ROOT / "docs" / doctor_report.DOCTOR_DOC
    ).read_text(encoding="utf-8")
