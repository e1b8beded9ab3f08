"""benchmarks/results_file.py의 테스트: 결과 파일의 검증, 원자적 쓰기, 오래된 결과 찾기."""

import json
import os
import shutil

import pytest

from benchmarks import results_file
from benchmarks.results_file import ResultsError
from tests.results_sample import sample_document, write
from tests.site_build import ROOT


@pytest.fixture
def doc():
    return sample_document(ROOT)


def test_sample_document_is_valid_and_survives_a_round_trip(tmp_path, doc):
    path = tmp_path / "gpu.json"
    results_file.write_atomically(path, doc)
    assert results_file.load(path) == doc


def test_published_results_are_valid():
    files = results_file.published_files(ROOT)
    assert files, "results/에 결과 파일이 하나도 없습니다"
    for path in files:
        assert results_file.load(path)["dry_run"] is False


def break_field(doc, field):
    """ "benchmarks.0.median_s" 같은 경로의 값을 지웁니다."""
    *parents, last = field.split(".")
    target = doc
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    del target[int(last) if last.isdigit() else last]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: break_field(d, "benchmarks.0.median_s"), "benchmarks[0].median_s"),
        (lambda d: break_field(d, "environment.torch"), "environment.torch"),
        (lambda d: d["benchmarks"][1].update(median_s="빠름"), "benchmarks[1].median_s"),
        (lambda d: d["benchmarks"][2]["metrics"].update(speed=1.0), "benchmarks[2].metrics"),
        (lambda d: d["benchmarks"][0].update(role="slow"), "benchmarks[0].role"),
        (lambda d: d["benchmarks"][0].update(snippet_sha256="abc"), "benchmarks[0].snippet_sha256"),
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d["not_measured"][0].update(reason=""), "not_measured[0].reason"),
        (
            lambda d: d["benchmarks"][0].update(ceiling="tip4.rand-on-device"),
            "benchmarks[0].ceiling",
        ),
        (lambda d: d["benchmarks"][1].update(id="tip4.rand-copy"), "benchmarks[1].id"),
    ],
)
def test_a_broken_file_names_the_file_and_the_field(tmp_path, doc, change, field):
    change(doc)
    path = write(tmp_path / "results" / "broken-gpu.json", doc)
    with pytest.raises(ResultsError) as caught:
        results_file.load(path)
    assert caught.value.field == field
    assert str(path) in str(caught.value) and field in str(caught.value)


def test_a_file_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "gpu.json"
    path.write_text('{\n "schema_version": 1,\n oops\n}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"gpu.json의 3번째 줄: JSON으로 읽을 수 없습니다"):
        results_file.load(path)


def test_an_invalid_document_is_never_written(tmp_path, doc):
    path = write(tmp_path / "gpu.json", sample_document(ROOT))
    before = path.read_bytes()
    del doc["environment"]
    with pytest.raises(ResultsError, match="environment"):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before


@pytest.mark.parametrize("interruption", [KeyboardInterrupt(), OSError("디스크가 가득 찼습니다")])
def test_an_interrupted_write_leaves_the_old_file_intact(tmp_path, doc, monkeypatch, interruption):
    path = write(tmp_path / "gpu.json", sample_document(ROOT))
    before = path.read_bytes()
    doc["environment"]["device_name"] = "Another GPU"

    def interrupted_replace(source, target):
        raise interruption

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(type(interruption)):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu.json"]  # 임시 파일도 남지 않습니다


def test_a_finished_write_replaces_the_whole_file(tmp_path, doc):
    path = write(tmp_path / "gpu.json", sample_document(ROOT))
    doc["benchmarks"] = doc["benchmarks"][:3]
    results_file.write_atomically(path, doc)
    assert len(json.loads(path.read_text(encoding="utf-8"))["benchmarks"]) == 3


def test_stale_snippets_are_the_ones_changed_after_measuring(tmp_path, doc):
    shutil.copytree(ROOT / "snippets", tmp_path / "snippets")
    assert results_file.stale_snippets(doc, tmp_path) == {}
    changed = tmp_path / "snippets" / "tip3_avoid_syncs.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 바뀐 줄\n", encoding="utf-8")
    assert results_file.stale_snippets(doc, tmp_path) == {"tip3": ["snippets/tip3_avoid_syncs.py"]}
    (tmp_path / "snippets" / "tip4_create_on_device.py").unlink()
    assert set(results_file.stale_snippets(doc, tmp_path)) == {"tip3", "tip4"}
