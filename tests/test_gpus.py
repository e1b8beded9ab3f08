"""먼저 할 일 페이지의 '내 GPU가 지원하는 것' 표(guide/gpus.toml)의 테스트(이슈 41 항목 4).

지원 열은 계산 능력의 규칙에서 나와야 하고(bf16·TF32는 8.0부터, float8은 8.9부터), 페이지의 표는
데이터 파일과 한 칸도 다르지 않아야 합니다. 최고 성능 열은 guide/peaks.toml의 값이며, 그 파일에
없는 GPU는 비워 둡니다(추측하지 않습니다).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from guide import peaks

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "guide" / "gpus.toml"
PAGE = ROOT / "docs" / "checklist.md"


def load(text=None):
    return tomllib.loads(text or DATA.read_text(encoding="utf-8"))["gpu"]


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
        for key, value in expected_support(row["cc"]).items():
            if row[key] != value:
                found.append(
                    f"{row['label']}: {key}={row[key]!r}, 계산 능력 {row['cc']}이면 {value!r}"
                )
    return found


def page_rows(text):
    section = text.split("{ #gpus }", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]


def table_of(rows):
    """데이터 파일이 정하는 페이지의 표."""
    by_label = {peak.label: peak for peak in peaks.load()}
    yes_no = {True: "있음", False: "없음"}
    table = []
    for row in rows:
        peak = row["peak"]
        figure = by_label[peak].bf16_dense_tflops if peak else None
        shown = "—" if figure is None else (f"{figure:g}")
        table.append([row["label"], row["where"], row["cc"], yes_no[row["bf16"]],
                      yes_no[row["tf32"]], yes_no[row["float8"]], f"`{row['precision']}`",
                      shown])  # fmt: skip
    return table


def test_the_support_columns_follow_from_the_compute_capability():
    rows = load()
    assert rule_problems(rows) == []
    # 이슈가 이름을 든 GPU가 모두 있습니다.
    labels = " ".join(row["label"] for row in rows)
    for name in ("T4", "L4", "P100", "3090", "4090", "L40S", "A10G", "RTX 6000 Ada", "A100",
                 "H100"):  # fmt: skip
        assert name in labels


def test_the_rule_check_fails_on_a_contradiction():
    rows = load()
    broken = [dict(row) for row in rows]
    t4 = next(row for row in broken if row["label"] == "Tesla T4")
    t4["bf16"] = True  # T4(7.5)에는 bf16 텐서 코어가 없습니다
    assert rule_problems(broken)
    broken = [dict(row) for row in rows]
    a100 = next(row for row in broken if row["label"] == "A100")
    a100["float8"] = True  # A100(8.0)에는 float8 텐서 코어가 없습니다
    assert rule_problems(broken)


def test_the_page_table_matches_the_data_file():
    text = PAGE.read_text(encoding="utf-8")
    assert page_rows(text) == table_of(load())
    # 표가 바뀌면 실패합니다.
    t4 = "| Tesla T4 | Colab 무료, Kaggle T4×2 | 7.5 | "
    assert page_rows(text.replace(t4 + "없음", t4 + "있음")) != table_of(load())


def test_no_bf16_peak_for_a_gpu_without_bf16_tensor_cores():
    for row in load():
        if not row["bf16"]:
            assert row["peak"] == "", row["label"]
        if row["peak"]:
            assert row["peak"] in {peak.label for peak in peaks.load()}


@pytest.mark.parametrize("row", load(), ids=lambda row: row["label"])
def test_the_precision_column_is_what_tip6_picks(row, monkeypatch):
    torch = pytest.importorskip("torch")
    from snippets import tip6_16bit

    major, minor = (int(part) for part in row["cc"].split("."))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: (major, minor))
    assert tip6_16bit.pick_precision("cuda") == row["precision"]
