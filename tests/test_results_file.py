"""benchmarks/results_file.py와 benchmarks/validation.py의 테스트: 결과 파일(스키마 3)의 검증, 읽기,
원자적 쓰기, 파일 이름, 검증 명령.

결과 파일은 다른 컴퓨터에서 오는 바깥 데이터입니다(이슈 21). 나쁜 파일마다 검증 명령
(`python -m results_format.results_file`)과 빌드의 읽기(hooks/results_data.load_devices)가 같은
파일을 똑같이 거절하는지 봅니다(P12). 읽기가 멈추지 않는 입력(링크, FIFO, 큰 문자열)은 시간
한도 안에서 끝나야 합니다: 멈추면 실패입니다.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from hooks import results_data
from results_format import results_file, schema
from results_format.results_file import ResultsError
from tests.results_sample import (
    CPU_DEVICE,
    GPU_DEVICE,
    SAMPLE_NAME,
    cpu_document,
    sample_document,
    write,
)
from tests.site_build import ROOT


@pytest.fixture
def doc():
    return sample_document(ROOT)


def test_sample_documents_are_valid_and_survive_a_round_trip(tmp_path, doc):
    for sample in (doc, cpu_document(ROOT)):
        path = tmp_path / results_file.file_name(sample)
        results_file.write_atomically(path, sample)
        assert results_file.load(path) == sample


def test_published_results_exist_and_are_valid():
    # P8: 빈 results/는 확인할 것이 없는 상태가 아니라 잘못된 상태입니다(CI도 같은 이유로 실패).
    files = results_file.published_files(ROOT)
    assert files, "results/에 결과 파일이 하나도 없습니다"
    for path in files:
        assert results_data.load_device(path).doc["dry_run"] is False


def tip4(doc, index=0):
    return doc["pages"]["tip4"]["benchmarks"][index]


def remove(mapping, name):
    del mapping[name]


def a_sweep(doc) -> dict:
    """형식은 맞는 스윕 하나(이름만 레지스트리에 없게 씁니다)."""
    code = ("date", "commit", "dirty", "snippet_sha256", "benchmark_sha256")
    measured = {name: doc["pages"]["tip4"]["measured"][name] for name in code}
    ratio = {"median": 1.2, "low": 1.1, "high": 1.3, "confidence": 0.961}
    point = {"x": 64, "rounds": 9, "seed": 1, "params": {}, "baseline_s": 0.2, "variant_s": 0.1,
             "ratio": ratio, "metrics": {"baseline": {}, "variant": {}}}  # fmt: skip
    return {"measured": measured, "points": [point]}


# (바꾸기, 짚어야 하는 항목). 모두 검증기에서 걸립니다.
BROKEN = {
    "missing-median": (lambda d: remove(tip4(d), "median_s"), "pages.tip4.benchmarks[0].median_s"),
    "missing-torch": (lambda d: remove(d["device"], "torch"), "device.torch"),
    "text-median": (lambda d: tip4(d, 1).update(median_s="빠름"),
                    "pages.tip4.benchmarks[1].median_s"),
    "unknown-metric": (lambda d: tip4(d, 2)["metrics"].update(speed=1.0),
                       "pages.tip4.benchmarks[2].metrics.speed"),
    "unknown-device-field": (lambda d: d["device"].update(cores=4), "device.cores"),
    "unknown-role": (lambda d: tip4(d).update(role="slow"), "pages.tip4.benchmarks[0].role"),
    "short-sha": (lambda d: d["pages"]["tip4"]["measured"].update(snippet_sha256="abc"),
                  "pages.tip4.measured.snippet_sha256"),
    "empty-reason": (lambda d: d["pages"]["tip5"]["not_measured"][0].update(reason=""),
                     "pages.tip5.not_measured[0].reason"),
    "ceiling-not-a-ceiling": (lambda d: tip4(d).update(ceiling="rand-create-on-device"),
                              "pages.tip4.benchmarks[0].ceiling"),
    "duplicate-key": (lambda d: tip4(d, 1).update(key="rand-create-then-copy"),
                      "pages.tip4.benchmarks[1].key"),
    "huge-median": (lambda d: tip4(d).update(median_s=1e308), "pages.tip4.benchmarks[0].median_s"),
    "huge-metric": (lambda d: tip4(d)["metrics"].update(gb_per_s=1e300),
                    "pages.tip4.benchmarks[0].metrics.gb_per_s"),
    "long-name": (lambda d: d["device"].update(name="G" * 500), "device.name"),
    "escape-in-driver": (lambda d: d["pages"]["tip4"]["measured"].update(driver="1\x1b[31m"),
                         "pages.tip4.measured.driver"),
    "markup-variant": (lambda d: tip4(d).update(variant="<script>"),
                       "pages.tip4.benchmarks[0].variant"),
    "backtick-group": (lambda d: tip4(d).update(group="a`b"), "pages.tip4.benchmarks[0].group"),
    "markup-param": (lambda d: tip4(d)["params"].update(mib="<b>"),
                     "pages.tip4.benchmarks[0].params.mib"),
    "timed-without-median": (lambda d: tip4(d).update(median_s=None),
                             "pages.tip4.benchmarks[0].median_s"),
    # 이슈 21: 검증기를 지나 빌드를 멈추게 하던 값들
    "subnormal-median": (lambda d: tip4(d).update(median_s=5e-324),
                         "pages.tip4.benchmarks[0].median_s"),
    "infinite-speedup": (lambda d: tip4(d, 1)["ratio"].update(median=1e7, high=1e7),
                         "pages.tip4.benchmarks[1].ratio.median"),
    "zero-ratio": (lambda d: tip4(d, 1)["ratio"].update(low=0.0),
                   "pages.tip4.benchmarks[1].ratio.low"),
    "text-param": (lambda d: tip4(d)["params"].update(mib="64"),
                   "pages.tip4.benchmarks[0].params.mib"),
    "computed-baseline": (lambda d: tip4(d).update(computed=True, median_s=None, iqr_s=None,
                                                   rounds=0, ratio=None),
                          "pages.tip4.benchmarks[0].computed"),
    "zero-rounds": (lambda d: tip4(d).update(rounds=0), "pages.tip4.benchmarks[0].rounds"),
    "interval-out-of-order": (lambda d: tip4(d, 1)["ratio"].update(low=3.0),
                              "pages.tip4.benchmarks[1].ratio"),
    "ratio-without-baseline": (lambda d: tip4(d, 2).update(ratio=tip4(d, 1)["ratio"]),
                               "pages.tip4.benchmarks[2].ratio"),
    "compared-without-ratio": (lambda d: tip4(d, 1).update(ratio=None),
                               "pages.tip4.benchmarks[1].ratio"),
    "homoglyph-name": (lambda d: d["device"].update(name="Test GPU 9000".replace("T", "\u0422")),
                       "device.name"),
    "zero-width-name": (lambda d: d["device"].update(name="Test GPU\u200b 9000"), "device.name"),
    "bidi-cpu-model": (lambda d: d["device"].update(cpu_model="\u202eUPC tseT"),
                       "device.cpu_model"),
    "bidi-reason": (lambda d: d["pages"]["tip5"]["not_measured"][0].update(reason="\u2067x"),
                    "pages.tip5.not_measured[0].reason"),
    "newline-after-commit": (lambda d: d["pages"]["tip4"]["measured"].update(
        commit="abcdef0123" + "4" * 30 + "\n"), "pages.tip4.measured.commit"),
    "newline-after-key": (lambda d: tip4(d, 2).update(key="device-copy\n"),
                          "pages.tip4.benchmarks[2].key"),
    "arabic-digits-in-date": (lambda d: d["pages"]["tip4"]["measured"].update(
        date="\u0662\u0660\u0663\u0661-04-05T06:07:08Z"), "pages.tip4.measured.date"),
    "fullwidth-digits-in-cores": (lambda d: d["device"].update(usable_cores="\uff11\uff16"),
                                  "device.usable_cores"),
    "impossible-date": (lambda d: d["pages"]["tip4"]["measured"].update(
        date="2026-13-45T06:07:08Z"), "pages.tip4.measured.date"),
    # 오래된 결과를 숨기는 길: 항목이 스니펫 경로를 스스로 댈 수 없습니다(레지스트리가 정합니다).
    "own-snippet-path": (lambda d: tip4(d).update(snippet="snippets/tip3_avoid_syncs.py"),
                         "pages.tip4.benchmarks[0].snippet"),
    "own-fingerprint": (lambda d: d["pages"]["tip4"]["measured"].update(snippet="x.py"),
                        "pages.tip4.measured.snippet"),
    # 레지스트리(P12)
    "unknown-page": (lambda d: d["pages"].update({"no-such-page": d["pages"]["tip5"]}),
                     "pages.no-such-page"),
    "unknown-group": (lambda d: tip4(d).update(group="no-such-group"),
                      "pages.tip4.benchmarks[0]"),
    "unknown-variant": (lambda d: tip4(d).update(variant="no-such-variant"),
                        "pages.tip4.benchmarks[0]"),
    "unknown-not-measured-group": (lambda d: d["pages"]["tip5"]["not_measured"][0].update(
        group="no-such-group"), "pages.tip5.not_measured[0].group"),
    "unknown-group-info": (lambda d: d["pages"]["tip4"]["groups"].update(
        {"no-such-group": d["pages"]["tip4"]["groups"]["rand"]}),
        "pages.tip4.groups.no-such-group"),
    "unknown-sweep": (lambda d: d["pages"]["tip4"]["sweeps"].update(
        {"no-such-sweep": a_sweep(d)}), "pages.tip4.sweeps.no-such-sweep"),
    "old-schema": (lambda d: d.update(schema_version=2), "schema_version"),
}  # fmt: skip


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_file_names_the_file_and_the_field(tmp_path, doc, case):
    change, field = BROKEN[case]
    change(doc)
    path = write(tmp_path / SAMPLE_NAME, doc)
    with pytest.raises(ResultsError) as caught:
        results_file.load(path)
    assert caught.value.field == field
    assert str(path) in str(caught.value) and field in str(caught.value)


@pytest.mark.parametrize("name", schema.TEXT_PARAMS)
def test_text_is_accepted_only_in_the_text_params(tmp_path, doc, name):
    tip4(doc)["params"][name] = "bfloat16"
    results_file.load(write(tmp_path / SAMPLE_NAME, doc))


def test_the_validator_and_the_build_refuse_the_same_files(tmp_path, doc, capsys):
    """P12: 나쁜 파일마다 검증 명령은 종료 코드 1, 빌드의 읽기는 같은 항목을 짚는 ResultsError."""
    disagreements = []
    for number, (case, (change, field)) in enumerate(BROKEN.items()):
        broken = copy.deepcopy(doc)
        change(broken)
        path = write(tmp_path / f"project-{number}" / "results" / SAMPLE_NAME, broken)
        command = results_file.main([str(path)])
        printed = capsys.readouterr()
        try:
            results_data.load_devices(path.parents[1])
            build = None
        except ResultsError as error:
            build = error.field
        if command != 1 or build != field or str(path) not in printed.err or "통과" in printed.out:
            disagreements.append((case, command, build))
    assert disagreements == []


def test_the_validator_and_the_build_accept_the_same_good_files(tmp_path, doc, capsys):
    folder = tmp_path / "results"
    for sample in (doc, cpu_document(ROOT)):
        results_file.write_atomically(folder / results_file.file_name(sample), sample)
    assert results_file.main([str(p) for p in sorted(folder.iterdir())]) == 0
    assert capsys.readouterr().out.count("통과") == 2
    assert [d.title for d in results_data.load_devices(tmp_path)] == [
        "Test GPU 9000 (700 W)",
        "CPU 4코어 (Test CPU)",
    ]


def test_a_dry_run_file_is_refused_by_the_validator_and_the_build(tmp_path, doc, capsys):
    doc["dry_run"] = True
    path = write(tmp_path / "results" / f"dry-run-{SAMPLE_NAME}", doc)
    assert results_file.main([str(path)]) == 1
    assert "드라이 런 결과는 results/에 둘 수 없습니다" in capsys.readouterr().err
    with pytest.raises(ResultsError, match="드라이 런"):
        results_data.load_devices(tmp_path)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_naming_the_field(tmp_path, doc, constant):
    text = json.dumps(doc, ensure_ascii=False).replace(
        '"median_s": 0.00737', f'"median_s": {constant}'
    )
    path = tmp_path / SAMPLE_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ResultsError, match="유한한 숫자가 아닙니다") as caught:
        results_file.load(path)
    assert caught.value.field == "pages.tip4.benchmarks[0].median_s"


def test_non_finite_numbers_are_never_written(tmp_path, doc):
    tip4(doc)["metrics"]["gb_per_s"] = float("nan")
    with pytest.raises(ResultsError, match=r"pages\.tip4\.benchmarks\[0\]\.metrics\.gb_per_s"):
        results_file.write_atomically(tmp_path / SAMPLE_NAME, doc)
    assert list(tmp_path.iterdir()) == []


def test_duplicate_keys_are_refused_instead_of_taking_the_last(tmp_path, doc):
    text = json.dumps(doc, ensure_ascii=False)
    text = text.replace('"dry_run": false', '"dry_run": false, "dry_run": false', 1)
    path = tmp_path / SAMPLE_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ResultsError, match="같은 이름의 항목 'dry_run'이 두 번 나옵니다"):
        results_file.load(path)


def test_a_file_that_is_not_utf8_is_one_korean_error(tmp_path, doc):
    path = tmp_path / SAMPLE_NAME
    path.write_bytes(json.dumps(doc).encode("utf-8").replace(b"Test GPU", b"Test \xff\xfeGPU"))
    with pytest.raises(ResultsError, match="UTF-8로 읽을 수 없습니다"):
        results_file.load(path)


def test_a_file_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_text('{\n "schema_version": 3,\n oops\n}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"의 3번째 줄: JSON으로 읽을 수 없습니다"):
        results_file.load(path)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("depth", [100_000, results_file.MAX_DEPTH + 1])
def test_a_deeply_nested_file_is_refused(tmp_path, depth):
    path = tmp_path / SAMPLE_NAME
    path.write_text("[" * depth + "]" * depth, encoding="utf-8")
    with pytest.raises(ResultsError, match="중첩이"):
        results_file.load(path)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("size", [80_000, results_file.MAX_BYTES - 100])
def test_a_string_of_escaped_quotes_parses_in_bounded_time(tmp_path, size):
    # 예전의 깊이 검사(정규식)는 80 KB에서 43초, 5 MB에서 47시간 걸렸습니다.
    body = '\\"' * (size // 2)
    path = tmp_path / SAMPLE_NAME
    path.write_text('{"schema_version": 3, "x": "' + body + '"}', encoding="utf-8")
    assert path.stat().st_size <= results_file.MAX_BYTES
    with pytest.raises(ResultsError, match="형식에 없는 항목입니다|필수 항목"):
        results_file.load(path)


@pytest.mark.timeout(20)
def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_bytes(b" " * (results_file.MAX_BYTES + 1))
    with pytest.raises(ResultsError, match="5 MB보다 큽니다") as caught:
        results_file.load(path)
    assert (caught.value.path, caught.value.field) == (str(path), "(파일)")


def test_a_missing_file_names_itself_and_the_system_reason(tmp_path):
    path = tmp_path / SAMPLE_NAME
    with pytest.raises(ResultsError) as caught:
        results_file.load(path)
    error = caught.value
    assert (error.path, error.field) == (str(path), "(파일)")
    assert error.problem == "읽을 수 없습니다 (No such file or directory)"


def not_a_regular_file(kind, folder, outside):
    path = folder / SAMPLE_NAME
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "outside":
        os.symlink(outside, path)
    else:
        os.symlink(kind, path)
    return path


@pytest.mark.timeout(10)
@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/stdin", "fifo", "directory", "outside"])
def test_links_fifos_and_folders_are_refused_without_reading(tmp_path, doc, kind):
    outside = write(tmp_path / "elsewhere" / SAMPLE_NAME, doc)  # 읽으면 통과할 파일입니다
    folder = tmp_path / "project" / "results"
    folder.mkdir(parents=True)
    path = not_a_regular_file(kind, folder, outside)
    with pytest.raises(ResultsError, match="보통 파일이 아닙니다") as caught:
        results_file.load(path)
    assert (caught.value.path, caught.value.field) == (str(path), "(파일)")
    assert caught.value.problem == "보통 파일이 아닙니다(링크, FIFO, 장치 파일은 읽지 않습니다)"
    with pytest.raises(ResultsError, match="보통 파일이 아닙니다"):
        results_data.load_devices(tmp_path / "project")


def test_a_results_folder_that_is_a_link_has_no_results(tmp_path, doc):
    write(tmp_path / "elsewhere" / SAMPLE_NAME, doc)
    os.symlink(tmp_path / "elsewhere", tmp_path / "results")
    assert results_file.published_files(tmp_path) == []


def test_a_file_named_for_another_device_is_refused(tmp_path):
    path = write(tmp_path / SAMPLE_NAME, cpu_document(ROOT))
    with pytest.raises(ResultsError, match="cpu-test-4cores-avx2-avx512f.json") as caught:
        results_file.load(path)
    assert caught.value.field == "(파일 이름)"


@pytest.mark.parametrize(
    ("device", "name"),
    [
        ({"name": "NVIDIA H200", "power_limit_w": 700.0, "count": 1}, "nvidia-h200-700w-1gpu"),
        ({"name": "NVIDIA H200", "power_limit_w": 700.0, "count": 8}, "nvidia-h200-700w-8gpu"),
        ({"name": "NVIDIA H200", "power_limit_w": 600.0, "count": 1}, "nvidia-h200-600w-1gpu"),
        ({"name": "NVIDIA H200", "power_limit_w": None, "count": 1}, "nvidia-h200-1gpu"),
        ({"name": "NVIDIA A100-SXM4-80GB", "power_limit_w": 400.0, "count": 1},
         "nvidia-a100-sxm4-80gb-400w-1gpu"),
        ({"kind": "cpu", "cpu_model": "AMD EPYC (family 25, model 17)", "usable_cores": 2,
          "cpu_flags": ["avx2", "avx512f", "avx512_bf16"]},
         "cpu-amd-epyc-family-25-model-17-2cores-avx2-avx512f-avx512bf16"),
        # 모델 이름이 같아도 AVX-512를 숨긴 VM은 다른 파일입니다(이슈 40).
        ({"kind": "cpu", "cpu_model": "AMD EPYC (family 25, model 17)", "usable_cores": 2,
          "cpu_flags": ["avx2"]}, "cpu-amd-epyc-family-25-model-17-2cores-avx2"),
        ({"kind": "cpu", "cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
          "usable_cores": 16, "cpu_flags": []}, "cpu-intel-xeon-platinum-8370c-16cores"),
    ],
)  # fmt: skip
def test_the_file_name_tells_gpu_count_and_power_limit_apart(device, name):
    base = CPU_DEVICE if device.get("kind") == "cpu" else GPU_DEVICE
    assert results_file.results_name(base | device) == name


def test_a_dry_run_file_name_says_so():
    doc = sample_document(ROOT) | {"dry_run": True}
    assert results_file.file_name(doc) == f"dry-run-{SAMPLE_NAME}"


def test_an_eight_gpu_run_does_not_overwrite_the_one_gpu_file(tmp_path, doc):
    eight = copy.deepcopy(doc)
    eight["device"]["count"] = 8
    for each in (doc, eight):
        results_file.write_atomically(tmp_path / "results" / results_file.file_name(each), each)
    devices = results_data.load_devices(tmp_path)
    assert sorted(d.title for d in devices) == [
        "Test GPU 9000 (700 W)",
        "Test GPU 9000 (700 W) × 8",
    ]


def test_an_invalid_document_is_never_written(tmp_path, doc):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    before = path.read_bytes()
    del doc["device"]
    with pytest.raises(ResultsError, match="device"):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before


@pytest.mark.parametrize("interruption", [KeyboardInterrupt(), OSError("디스크가 가득 찼습니다")])
def test_an_interrupted_write_leaves_the_old_file_intact(tmp_path, doc, monkeypatch, interruption):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    before = path.read_bytes()
    doc["device"]["torch"] = "3.0.0"

    def interrupted_replace(source, target):
        raise interruption

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(type(interruption)):
        results_file.write_atomically(path, doc)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [SAMPLE_NAME]  # 임시 파일도 없습니다


def test_a_finished_write_replaces_the_whole_file_and_is_world_readable(tmp_path, doc):
    path = write(tmp_path / SAMPLE_NAME, sample_document(ROOT))
    del doc["pages"]["tip3"]
    results_file.write_atomically(path, doc)
    assert list(json.loads(path.read_text(encoding="utf-8"))["pages"]) == ["tip4", "tip5"]
    assert path.stat().st_mode & 0o777 == 0o644


def test_leftover_temp_files_are_never_read_as_results(tmp_path, doc):
    write(tmp_path / "results" / SAMPLE_NAME, doc)
    # SIGKILL로 멈춘 쓰기가 남긴 임시 파일(write_atomically의 이름 규칙)
    (tmp_path / "results" / f".{SAMPLE_NAME}.k3j9x2.tmp").write_text("{", encoding="utf-8")
    (tmp_path / "results" / f".{SAMPLE_NAME}").write_text("{", encoding="utf-8")
    assert [p.name for p in results_file.published_files(tmp_path)] == [SAMPLE_NAME]
    assert len(results_data.load_devices(tmp_path)) == 1


def test_no_results_folder_means_no_results(tmp_path):
    assert results_file.published_files(tmp_path) == []


def run_command(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "results_format.results_file", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_command_line_validates_files_in_korean(tmp_path, doc):
    good = write(tmp_path / SAMPLE_NAME, doc)
    bad = write(tmp_path / "nvidia-h200-700w-1gpu.json", doc)
    result = run_command(str(good), str(bad))
    assert result.returncode == 1
    assert f"통과: {good}" in result.stdout and "nvidia-h200" not in result.stdout
    assert f"{bad}의 (파일 이름): device에 맞는 이름은 {SAMPLE_NAME}입니다" in result.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_korean_usage_and_exits_zero(flag):
    result = run_command(flag)
    assert result.returncode == 0
    assert "사용법: python -m results_format.results_file" in result.stderr + result.stdout
    assert "읽을 수 없습니다" not in result.stderr  # --help를 파일 이름으로 읽지 않았습니다


def test_no_arguments_or_an_unknown_option_is_a_usage_error(capsys):
    assert results_file.main([]) == 2
    assert results_file.main(["--frobnicate"]) == 2
    assert capsys.readouterr().err.count("사용법") == 2


def test_escape_codes_in_file_names_are_printed_escaped(tmp_path, capsys):
    path = tmp_path / "evil\x1b[2J\x1b]0;owned\x07.json"
    path.write_text("{}", encoding="utf-8")
    assert results_file.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "evil\\x1b[2J\\x1b]0;owned\\x07.json" in err


# --- 오류의 세 부분(파일, 항목, 문제)과 경계, 쓰기의 세부를 글자 그대로 ---------------------------


def error_of(call, *args):
    with pytest.raises(ResultsError) as caught:
        call(*args)
    error = caught.value
    return error.path, error.field, error.problem


def test_a_file_of_exactly_the_size_limit_is_read(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_bytes(b" " * results_file.MAX_BYTES)
    assert len(results_file._open_regular(path)) == results_file.MAX_BYTES


def pretend_regular(monkeypatch, regular):
    """lstat을 본 다음에 파일이 바뀌는 경우: lstat은 보통 파일을 보고, 열 때는 다른 것입니다."""
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path: real_lstat(regular))


@pytest.mark.timeout(10)
def test_a_link_swapped_in_after_the_check_is_not_followed(tmp_path, doc, monkeypatch):
    outside = write(tmp_path / "elsewhere" / SAMPLE_NAME, doc)  # 따라가면 통과할 파일입니다
    path = tmp_path / SAMPLE_NAME
    os.symlink(outside, path)
    pretend_regular(monkeypatch, outside)
    problem = error_of(results_file.load, path)
    assert problem == (str(path), "(파일)", "읽을 수 없습니다 (Too many levels of symbolic links)")


@pytest.mark.timeout(5)
def test_a_fifo_swapped_in_after_the_check_is_refused_without_waiting(tmp_path, doc, monkeypatch):
    regular = write(tmp_path / "elsewhere" / SAMPLE_NAME, doc)
    path = tmp_path / SAMPLE_NAME
    os.mkfifo(path)
    pretend_regular(monkeypatch, regular)
    # O_NONBLOCK이 없으면 쓰는 쪽이 없는 FIFO를 열다가 멈춥니다
    problem = error_of(results_file.load, path)
    assert problem == (str(path), "(파일)", "보통 파일이 아닙니다")


def test_nesting_up_to_the_limit_is_read_and_one_level_more_is_refused():
    limit = results_file.MAX_DEPTH
    nested: list = []
    for _ in range(limit - 1):
        nested = [nested]
    assert results_file.parse(b"[" * limit + b"]" * limit, "x.json") == nested
    deeper = b"[" * (limit + 1) + b"]" * (limit + 1)
    expected = ("x.json", "(문서 전체)", f"중첩이 {limit}단계보다 깊습니다")
    assert error_of(results_file.parse, deeper, "x.json") == expected


def test_deep_nesting_is_found_through_objects_and_behind_other_values():
    limit = results_file.MAX_DEPTH
    objects = b'{"a": ' * (limit + 1) + b"1" + b"}" * (limit + 1)
    # 깊은 목록 뒤에 숫자가 있어도(숫자를 먼저 봐도) 끝까지 찾습니다.
    behind = b"[" + b"[" * limit + b"]" * limit + b", 1]"
    for data in (objects, behind):
        assert error_of(results_file.parse, data, "x.json")[1:] == (
            "(문서 전체)",
            f"중첩이 {limit}단계보다 깊습니다",
        )


def test_parse_errors_name_the_file_the_place_and_the_problem(tmp_path):
    assert error_of(results_file.parse, b'{"a": "\xff"}', "x.json") == (
        "x.json", "7번째 바이트", "UTF-8로 읽을 수 없습니다(결과 파일은 UTF-8입니다)"
    )  # fmt: skip
    assert error_of(results_file.parse, b'{\n "a": 1,\n oops\n}', "x.json") == (
        "x.json", "3번째 줄", "JSON으로 읽을 수 없습니다 (Expecting property name enclosed in "
        "double quotes)"
    )  # fmt: skip
    assert error_of(results_file.parse, b'{"a": 1, "a": 2}', "x.json") == (
        "x.json", "(문서 전체)", "JSON으로 읽을 수 없습니다 (같은 이름의 항목 'a'이 두 번 나옵니다)"
    )  # fmt: skip
    assert error_of(results_file.parse, b"[" * 100_000 + b"]" * 100_000, "x.json") == (
        "x.json", "(문서 전체)", f"중첩이 {results_file.MAX_DEPTH}단계보다 깊습니다"
    )  # fmt: skip


def test_a_dry_run_is_refused_as_a_dry_run_field_error(tmp_path, doc):
    doc["dry_run"] = True
    path = write(tmp_path / f"dry-run-{SAMPLE_NAME}", doc)
    assert error_of(results_file.load_published, path) == (
        str(path), "dry_run",
        "드라이 런 결과는 results/에 둘 수 없습니다(숫자가 아니라 흐름 확인용입니다)",
    )  # fmt: skip


def test_a_misnamed_file_error_names_the_file(tmp_path):
    path = write(tmp_path / SAMPLE_NAME, cpu_document(ROOT))
    assert error_of(results_file.load, path) == (
        str(path), "(파일 이름)", "device에 맞는 이름은 cpu-test-4cores-avx2-avx512f.json입니다"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "expected"),
    [("G" * 100, "g" * 80 + "-700w-1gpu"), ("☃ ☃", "unknown-700w-1gpu")],
)
def test_a_gpu_name_slug_is_cut_at_80_characters_and_never_empty(name, expected):
    assert results_file.results_name(GPU_DEVICE | {"name": name}) == expected


def test_serialized_results_keep_korean_key_order_and_one_space_indent():
    doc = {"b": "차이 없음", "a": [1, 2.5]}
    assert results_file.serialize(doc) == '{\n "b": "차이 없음",\n "a": [\n  1,\n  2.5\n ]\n}\n'
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        results_file.serialize({"median_s": float("nan")})


def test_an_invalid_document_error_names_the_target_file(tmp_path, doc):
    path = tmp_path / SAMPLE_NAME
    del doc["device"]
    with pytest.raises(ResultsError) as caught:
        results_file.write_atomically(path, doc)
    assert caught.value.path == str(path)


def test_a_write_makes_missing_folders_and_a_hidden_temp_file_beside_the_target(
    tmp_path, doc, monkeypatch
):
    path = tmp_path / "a" / "b" / "results" / SAMPLE_NAME
    replaced = []
    real_replace = os.replace

    def record(source, target):
        replaced.append((source, target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", record)
    results_file.write_atomically(path, doc)
    [(source, target)] = replaced
    assert target == path and os.path.dirname(source) == str(path.parent)
    name = os.path.basename(source)
    assert name.startswith(f".{SAMPLE_NAME}.") and name.endswith(".tmp")
    assert path.read_text(encoding="utf-8") == results_file.serialize(doc)
    assert sorted(p.name for p in path.parent.iterdir()) == [SAMPLE_NAME]


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["-h", "--help"]])
def test_asking_for_help_prints_the_usage_and_exits_zero(argv, capsys):
    assert results_file.main(argv) == 0
    assert capsys.readouterr().err == (
        "사용법: python -m results_format.results_file 결과파일.json …  "
        "(빌드와 같은 검사를 합니다)\n"
    )


def test_help_with_a_file_or_a_single_dash_is_a_usage_error(capsys):
    assert results_file.main(["-h", SAMPLE_NAME]) == 2
    assert results_file.main(["-"]) == 2
    assert capsys.readouterr().err.count("사용법") == 2


def test_printable_characters_in_a_passing_file_name_are_printed_as_they_are(tmp_path, doc, capsys):
    # 제어 문자만 바꿉니다: 역슬래시와 한글은 그대로입니다(repr처럼 두 번 쓰지 않습니다).
    path = write(tmp_path / "결과\\a" / SAMPLE_NAME, doc)
    assert results_file.main([str(path)]) == 0
    assert capsys.readouterr().out == f"통과: {tmp_path}/결과\\a/{SAMPLE_NAME}\n"


def test_a_file_that_grows_after_the_check_is_still_cut_at_the_limit(tmp_path, doc, monkeypatch):
    small = write(tmp_path / "elsewhere" / SAMPLE_NAME, doc)
    path = tmp_path / SAMPLE_NAME
    path.write_bytes(b" " * (results_file.MAX_BYTES + 1))
    pretend_regular(monkeypatch, small)  # lstat은 작은 파일을 봅니다
    assert error_of(results_file.load, path) == (str(path), "(파일)", "5 MB보다 큽니다")


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_schema_says_how_to_measure_again(tmp_path, doc, version):
    doc["schema_version"] = version
    path = write(tmp_path / SAMPLE_NAME, doc)
    assert error_of(results_file.load, path) == (
        str(path), "schema_version",
        f"예전 형식({version})입니다. 이 빌드는 3을 읽습니다: "
        "`pytest benchmarks --benchmark --publish`로 다시 재세요",
    )  # fmt: skip


def test_a_parse_error_while_loading_names_the_file(tmp_path):
    path = tmp_path / SAMPLE_NAME
    path.write_text("{\n oops\n}\n", encoding="utf-8")
    assert error_of(results_file.load, path)[:2] == (str(path), "2번째 줄")


@pytest.mark.parametrize(
    ("device", "title"),
    [(GPU_DEVICE, "Test GPU 9000 (700 W)"),
     (GPU_DEVICE | {"power_limit_w": None}, "Test GPU 9000"),
     (GPU_DEVICE | {"count": 2}, "Test GPU 9000 (700 W) × 2"),
     (CPU_DEVICE, "CPU 4코어 (Test CPU)")],
)  # fmt: skip
def test_the_device_title_shows_power_limit_and_count_only_when_they_tell_devices_apart(
    device, title
):
    assert results_file.device_title(device) == title
