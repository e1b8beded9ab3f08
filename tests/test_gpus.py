"""먼저 할 일 페이지의 '내 GPU가 지원하는 것' 표(guide/gpus.toml)의 테스트(이슈 41 항목 4).

지원 열은 계산 능력의 규칙에서 나와야 합니다(bf16·TF32는 8.0부터, float8은 8.9부터). 페이지의 표는
손으로 쓰지 않고 빌드할 때 데이터 파일에서 그립니다(hooks/gpus.py). 최고 성능 열은
guide/peaks.toml의 값이며, 그 파일에 없는 GPU는 —로 둡니다(추측하지 않습니다).
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from guide import gpus, peaks
from hooks import gpus as gpus_hook
from tests.site_build import ROOT

PAGE = ROOT / "docs" / "checklist.md"
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


def expected_support(cc: str) -> dict:
    """계산 능력에서 지원 열과 Lightning precision을 끌어냅니다."""
    major, minor = (int(part) for part in cc.split("."))
    value = (major, minor)
    if value >= (8, 0):
        precision = "bf16-mixed"
    elif value >= (7, 0):
        precision = "16-mixed"
    else:
        precision = "32-true"
    return {"bf16": value >= (8, 0), "tf32": value >= (8, 0), "float8": value >= (8, 9),
            "precision": precision}  # fmt: skip


def rule_problems(rows):
    found = []
    for row in rows:
        for key, value in expected_support(row.cc).items():
            if getattr(row, key) != value:
                found.append(
                    f"{row.label}: {key}={getattr(row, key)!r}, 계산 능력 {row.cc}이면 {value!r}"
                )
    return found


def table_cells(html: str) -> list[list[str]]:
    """그린 표의 본문 행마다 칸의 글자(태그를 빼고 이스케이프를 푼 것)."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [unescape(re.sub(r"<[^>]+>", "", cell)) for cell in CELL.findall(row)]
        for row in ROW.findall(body)
    ]


def expected_cells(rows, known) -> list[list[str]]:
    """데이터 파일이 정하는 표: 훅과 따로 데이터에서 바로 만듭니다."""
    by_label = {peak.label: peak for peak in known}
    yes_no = {True: "있음", False: "없음"}
    table = []
    for row in rows:
        figure = by_label[row.peak].bf16_dense_tflops if row.peak else None
        table.append([row.label, row.where, row.cc, yes_no[row.bf16], yes_no[row.tf32],
                      yes_no[row.float8], row.precision,
                      "—" if figure is None else f"{figure:g}"])  # fmt: skip
    return table


def fake_gpu(label, peak="", **fields):
    values = {"label": label, "where": "어딘가", "cc": "8.9", "bf16": True, "tf32": True,
              "float8": True, "precision": "bf16-mixed", "peak": peak}  # fmt: skip
    return gpus.Gpu(**(values | fields))


FAKE_PEAK = peaks.Peak(label="가짜 GPU", name="^Fake$", bf16_dense_tflops=91.06, source="문서")


def test_the_support_columns_follow_from_the_compute_capability():
    rows = gpus.load()
    assert rule_problems(rows) == []
    # 이슈가 이름을 든 GPU가 모두 있습니다.
    labels = " ".join(row.label for row in rows)
    for name in ("T4", "L4", "P100", "3090", "4090", "L40S", "A10G", "RTX 6000 Ada", "A100",
                 "H100"):  # fmt: skip
        assert name in labels


def test_the_rule_check_fails_on_a_contradiction():
    rows = gpus.load()
    # T4(7.5)에는 bf16 텐서 코어가 없습니다
    broken = [dataclasses.replace(r, bf16=True) if r.label == "Tesla T4" else r for r in rows]
    assert rule_problems(broken)
    # A100(8.0)에는 float8 텐서 코어가 없습니다
    broken = [dataclasses.replace(r, float8=True) if r.label == "A100" else r for r in rows]
    assert rule_problems(broken)


def test_a_row_shows_its_values_and_a_dash_without_a_peak():
    old = fake_gpu("옛 <GPU> & 친구", cc="7.5", bf16=False, tf32=False, float8=False,
                   precision="16-mixed")  # fmt: skip
    new = fake_gpu("새 GPU", peak="가짜 GPU")
    assert gpus_hook.rows([old, new], [FAKE_PEAK]) == [
        {"label": "옛 <GPU> & 친구", "where": "어딘가", "cc": "7.5", "bf16": "없음", "tf32": "없음",
         "float8": "없음", "precision": "16-mixed", "peak": "—"},
        {"label": "새 GPU", "where": "어딘가", "cc": "8.9", "bf16": "있음", "tf32": "있음",
         "float8": "있음", "precision": "bf16-mixed", "peak": "91.06"},
    ]  # fmt: skip
    html = gpus_hook.table([old, new], [FAKE_PEAK])
    # 데이터의 글자는 이스케이프합니다(자동 이스케이프 템플릿).
    assert "<td>옛 &lt;GPU&gt; &amp; 친구</td>" in html
    assert '<td><code>16-mixed</code></td><td class="num">—</td>' in html
    assert table_cells(html) == expected_cells([old, new], [FAKE_PEAK])


def test_a_peak_label_missing_from_peaks_toml_stops_the_build():
    with pytest.raises(PluginError) as caught:
        gpus_hook.rows([fake_gpu("새 GPU", peak="없는 항목")], [FAKE_PEAK])
    message = "guide/gpus.toml의 새 GPU: guide/peaks.toml에 '없는 항목' 항목이 없습니다"
    assert str(caught.value) == message
    assert gpus_hook.rows([fake_gpu("새 GPU", peak="가짜 GPU")], [FAKE_PEAK])[0]["peak"] == "91.06"


def test_every_row_of_the_data_file_appears_with_its_values():
    rows, known = gpus.load(), peaks.load()
    assert table_cells(gpus_hook.table(rows, known)) == expected_cells(rows, known)
    # 데이터가 바뀌면 표도 바뀝니다.
    broken = [dataclasses.replace(r, bf16=True) if r.label == "Tesla T4" else r for r in rows]
    assert table_cells(gpus_hook.table(broken, known)) != expected_cells(rows, known)


def test_the_checklist_marker_becomes_the_table():
    # 빌드가 부르는 훅(mkdocs.yml의 hooks)을 같은 프로세스에서 페이지 하나에 부릅니다.
    assert "  - hooks/gpus.py\n" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    source = PAGE.read_text(encoding="utf-8")
    section = source.split("{ #gpus }", 1)[1].split("\n## ", 1)[0]
    assert "<!-- gpus -->" in section
    # 손으로 쓴 Markdown 표가 남아 있지 않습니다.
    assert not re.search(r"^\|.*\|$", section, re.M)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="checklist.md"))
    rendered = gpus_hook.on_page_markdown(source, page, None, None)
    assert "<!-- gpus -->" not in rendered
    assert gpus_hook.table(gpus.load(), peaks.load()) in rendered
    # 자리가 없는 페이지는 그대로입니다.
    assert gpus_hook.on_page_markdown("# 제목\n", page, None, None) == "# 제목\n"


def test_the_built_page_shows_every_gpu_of_the_data_file(built_site):
    html = (built_site / "checklist.html").read_text(encoding="utf-8")
    label = 'aria-label="내 GPU가 지원하는 것 표"'
    found = re.search(rf'<section class="table-scroll"[^>]*{label}.*?</table>', html, re.S)
    assert found, "빌드한 페이지에 GPU 표가 없습니다"
    assert table_cells(found[0]) == expected_cells(gpus.load(), peaks.load())


def test_no_bf16_peak_for_a_gpu_without_bf16_tensor_cores():
    for row in gpus.load():
        if not row.bf16:
            assert row.peak == "", row.label
        if row.peak:
            assert row.peak in {peak.label for peak in peaks.load()}


@pytest.mark.parametrize("row", gpus.load(), ids=lambda row: row.label)
def test_the_precision_column_is_what_tip6_picks(row, monkeypatch):
    torch = pytest.importorskip("torch")
    from snippets import tip6_16bit

    major, minor = (int(part) for part in row.cc.split("."))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: (major, minor))
    assert tip6_16bit.pick_precision("cuda") == row.precision
