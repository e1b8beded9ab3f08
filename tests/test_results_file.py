"""benchmarks/results_file.py의 테스트: 결과 파일의 검증, 원자적 쓰기, 오래된 결과 찾기."""

import json
import os
import shutil

import pytest

from benchmarks import results_file
from benchmarks.results_file import ResultsError
from tests.results_sample import SAMPLE_NAME, sample_document, write
from tests.site_build import ROOT


@pytest.fixture
def doc():
    return sample_document(ROOT)


def test_sample_document_is_valid_and_survives_a_round_trip(tmp_path, doc):
    path = tmp_path / SAMPLE_NAME
    results_file.write_atomically(path, doc)
    assert results_file.load(path) == doc


def test_published_results_are_valid():
    # 결과 파일은 다시 재서 발행하는 중일 수 있습니다. 있는 파일은 모두 읽을 수 있어야 합니다.
    files = results_file.published_files(ROOT)
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
        (lambda d: d["benchmarks"][2]["metrics"].update(speed=1.0), "benchmarks[2].metrics.speed"),
        (lambda d: d["environment"].update(cores=4), "environment.cores"),
        (lambda d: d["benchmarks"][0].update(role="slow"), "benchmarks[0].role"),
        (lambda d: d["benchmarks"][0].update(fingerprint="abc"), "benchmarks[0].fingerprint"),
        (lambda d: d.update(schema_version=1), "schema_version"),
        (lambda d: d["not_measured"][0].update(reason=""), "not_measured[0].reason"),
        (
            lambda d: d["benchmarks"][0].update(ceiling="tip4.rand-on-device"),
            "benchmarks[0].ceiling",
        ),
        (
            lambda d: d["benchmarks"][1].update(key="rand-copy", id="tip4.rand-copy"),
            "benchmarks[1].id",
        ),  # fmt: skip
        # 바깥 데이터의 한계: 너무 큰 값, 너무 긴 글자, 제어 문자, 열쇠에 들어갈 수 없는 글자
        (lambda d: d["benchmarks"][0].update(median_s=1e308), "benchmarks[0].median_s"),
        (
            lambda d: d["benchmarks"][0]["metrics"].update(gb_per_s=1e300),
            "benchmarks[0].metrics.gb_per_s",
        ),  # fmt: skip
        (lambda d: d["environment"].update(device_name="G" * 500), "environment.device_name"),
        (lambda d: d["environment"].update(driver="1\x1b[31m"), "environment.driver"),
        (lambda d: d["benchmarks"][0].update(variant="<script>"), "benchmarks[0].variant"),
        (lambda d: d["benchmarks"][0].update(group="a`b"), "benchmarks[0].group"),
        (lambda d: d["benchmarks"][0]["params"].update(mib="<b>"), "benchmarks[0].params.mib"),
        (lambda d: d["benchmarks"][0].update(median_s=None), "benchmarks[0].median_s"),
    ],
)
def test_a_broken_file_names_the_file_and_the_field(tmp_path, doc, change, field):
    change(doc)
    path = write(tmp_path / "results" / SAMPLE_NAME, doc)
    with pytest.raises(ResultsError) as caught:
        results_file.load(path)
    assert caught.value.field == field
    assert str(path) in str(caught.value) and field in str(caught.value)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_naming_the_field(tmp_path, doc, constant):
    text = json.dumps(doc, ensure_ascii=False).replace(
        '"median_s": 0.00737', f'"median_s": {constant}'
    )
    path = tmp_path / SAMPLE_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ResultsError, match="유한한 숫자가 아닙니다") as caught:
        results_file.load(path)
    assert caught.value.field == "benchmarks[0].median_s"


def test_non_finite_numbers_are_never_written(tmp_path, doc):
    doc["benchmarks"][0]["metrics"]["gb_per_s"] = float("nan")
    with pytest.raises(ResultsError, match="benchmarks\\[0\\].metrics.gb_per_s"):
        results_file.write_atomically(tmp_path / SAMPLE_NAME, doc)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_utf8_is_one_korean_error(tmp_path, doc):
    path = tmp_path / SAMPLE_NAME
    path.write_bytes(json.dumps(doc).encode("utf-8").replace(b"Test GPU", b"Test \xff\xfeGPU"))
    with pytest.raises(ResultsError, match="UTF-8로 읽을 수 없습니다"):
        results_file.load(path)


def test_a_deeply_nested_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ResultsError, match="중첩이"):
        results_file.load(path)


def test_a_file_named_for_another_device_is_refused(tmp_path, doc):
    doc["environment"].update(device_kind="cpu", device_name="Test CPU", device_count=0,
                              driver=None, cuda=None, cudnn=None)  # fmt: skip
    path = write(tmp_path / "nvidia-h200.json", doc)
    with pytest.raises(ResultsError, match="cpu-test-16cores.json") as caught:
        results_file.load(path)
    assert caught.value.field == "(파일 이름)"


def test_a_file_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_text('{\n "schema_version": 2,\n oops\n}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"의 3번째 줄: JSON으로 읽을 수 없습니다"):
        results_file.load(path)


def test_an_invalid_document_is_never_written(tmp_path, doc):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    before = path.read_bytes()
    del doc["environment"]
    with pytest.raises(ResultsError, match="environment"):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before


@pytest.mark.parametrize("interruption", [KeyboardInterrupt(), OSError("디스크가 가득 찼습니다")])
def test_an_interrupted_write_leaves_the_old_file_intact(tmp_path, doc, monkeypatch, interruption):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    before = path.read_bytes()
    doc["environment"]["torch"] = "3.0.0"

    def interrupted_replace(source, target):
        raise interruption

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(type(interruption)):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [SAMPLE_NAME]  # 임시 파일도 없습니다


def test_a_finished_write_replaces_the_whole_file_and_is_world_readable(tmp_path, doc):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    doc["benchmarks"] = doc["benchmarks"][:3]
    results_file.write_atomically(path, doc)
    assert len(json.loads(path.read_text(encoding="utf-8"))["benchmarks"]) == 3
    assert path.stat().st_mode & 0o777 == 0o644


def test_leftover_temp_files_are_never_read_as_results(tmp_path, doc):
    write(tmp_path / "results" / SAMPLE_NAME, doc)
    (tmp_path / "results" / f".{SAMPLE_NAME}.abc123.tmp").write_text("{", encoding="utf-8")
    assert [p.name for p in results_file.published_files(tmp_path)] == [SAMPLE_NAME]


def test_no_results_folder_means_no_results(tmp_path):
    assert results_file.published_files(tmp_path) == []


def copy_code(destination):
    for name in ("snippets", "benchmarks"):
        shutil.copytree(
            ROOT / name, destination / name, ignore=shutil.ignore_patterns("__pycache__")
        )


def test_stale_pages_cover_the_snippet_and_the_benchmark(tmp_path, doc):
    copy_code(tmp_path)
    assert results_file.stale_pages(doc, tmp_path) == {}
    bench = tmp_path / "benchmarks" / "bench_tip3_avoid_syncs.py"
    bench.write_text(bench.read_text(encoding="utf-8") + "\n# 크기를 바꿈\n", encoding="utf-8")
    assert set(results_file.stale_pages(doc, tmp_path)) == {"tip3"}
    (tmp_path / "snippets" / "tip4_create_on_device.py").unlink()
    stale = results_file.stale_pages(doc, tmp_path)
    assert stale["tip4"] == {"snippets/tip4_create_on_device.py": "없음"}
    assert stale["tip3"]["benchmarks/bench_tip3_avoid_syncs.py"] == "바뀜"


def test_the_command_line_validates_files_in_korean(tmp_path, doc, capsys):
    good = write(tmp_path / SAMPLE_NAME, doc)
    bad = write(tmp_path / "nvidia-h200.json", doc)
    assert results_file.main([str(good)]) == 0
    assert results_file.main([str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert "통과" in captured.out and "(파일 이름)" in captured.err
