"""benchmarks/session.py의 테스트(이슈 18 항목 1, 이슈 21 "부분 발행"): 페이지 단위 발행.

한 번의 실행을 손으로 만든 MeasurementRun으로 흉내 내고, 문서 만들기와 병합, 발행, 거절을 같은
프로세스에서 확인합니다. 실제 `pytest --benchmark` 흐름은 tests/test_benchmark_plugin.py가 봅니다.
"""

from __future__ import annotations

import copy
import json
import multiprocessing

import pytest
import torch

from guide import registry
from measuring import history, interleave
from measuring import session as measurement
from results_format import provenance, results_file, validation

CPU = torch.device("cpu")


def entries_for(page_id: str, seconds: float) -> list[dict]:
    """페이지의 모든 묶음을 잰 것처럼: 묶음마다 기준과 권장 방식(천장 묶음은 천장 하나)."""
    page = registry.by_id(page_id)
    first, second = list(page.variants)[:2]
    found = []
    for group in page.groups:
        if page.group(group).conclusion == "ceiling":
            found.append(_entry(f"{group}-ceiling", group, first, "ceiling", seconds / 4))
            continue
        found.append(_entry(f"{group}-slow", group, first, "baseline", seconds))
        ratio = {"median": 2.0, "low": 1.9, "high": 2.1, "confidence": 0.961}
        found.append(_entry(f"{group}-fast", group, second, "recommended", seconds / 2, ratio))
    return found


def _entry(key, group, variant, role, seconds, ratio=None) -> dict:
    return {
        "key": key, "group": group, "variant": variant, "role": role, "computed": False,
        "median_s": seconds, "iqr_s": seconds / 100, "rounds": 9, "iterations": 1,
        "params": {}, "metrics": {}, "ceiling": None, "ratio": ratio,
    }  # fmt: skip


def new_run(tmp_path, *pages, seconds=0.01, **fields) -> measurement.MeasurementRun:
    run = measurement.MeasurementRun(
        timing=True, gpu=False, dry_run=False, publish=True, sweep=False,
        results_dir=tmp_path / "results", device=CPU, settings=interleave.Settings(), seed=77,
    )  # fmt: skip
    for name, value in fields.items():
        setattr(run, name, value)
    for page_id in pages:
        record = run.page(page_id)
        if page_id == "tip5":
            run.record_not_measured("tip5", "dp-vs-ddp", "GPU가 없어 재지 않았습니다.")
            continue
        for entry in entries_for(page_id, seconds):
            info = {"seed": 1, "rounds": 9, "seconds": 1.0, "width": 0.02, "target": 0.05}
            record.groups.setdefault(entry["group"], info)
            record.benchmarks.append(entry)
    return run


@pytest.fixture
def local(tmp_path, monkeypatch):
    """test-output/results 대신 쓰는 임시 폴더(저장소의 test-output/을 건드리지 않습니다)."""
    folder = tmp_path / "local"
    monkeypatch.setattr(measurement, "LOCAL_RESULTS", folder)
    return folder


def old_document(tmp_path, *pages, **device) -> dict:
    """예전에 발행한 파일: 같은 장치(이 컴퓨터)에서 잰, 날짜와 커밋이 다른 페이지들."""
    doc = measurement.build_document(new_run(tmp_path, *pages, seconds=0.5))
    for section in doc["pages"].values():
        section["measured"].update(date="2030-01-02T03:04:05Z", commit="1" * 40)
    doc["device"].update(device)
    return validation.validate(doc, "old")


def publish_old(tmp_path, *pages, **device):
    doc = old_document(tmp_path, *pages, **device)
    path = tmp_path / "results" / results_file.file_name(doc)
    results_file.write_atomically(path, doc)
    return path, path.read_bytes()


def test_the_document_has_one_device_block_and_one_section_per_measured_page(tmp_path):
    run = new_run(tmp_path, "tip5", "tip4")
    doc = measurement.build_document(run)
    validation.validate(doc, "new")
    assert doc["device"] == provenance.describe_device(CPU)
    assert list(doc["pages"]) == ["tip4", "tip5"]  # 레지스트리 순서
    tip4 = doc["pages"]["tip4"]
    page = registry.by_id("tip4")
    assert tip4["measured"]["seed"] == 77
    assert tip4["measured"]["snippet_sha256"] == provenance.sha256(page.snippet_path)
    assert tip4["measured"]["benchmark_sha256"] == provenance.sha256(page.benchmark_path)
    assert doc["pages"]["tip5"]["not_measured"] == [
        {"group": "dp-vs-ddp", "reason": "GPU가 없어 재지 않았습니다."}
    ]


def test_publishing_one_page_replaces_only_that_section(tmp_path, local):
    path, _ = publish_old(tmp_path, "tip3", "tip4", "tip5")
    old = results_file.load(path)
    run = new_run(tmp_path, "tip4")
    assert measurement.finish(run) is True, run.messages
    new = results_file.load(path)
    assert list(new["pages"]) == ["tip3", "tip4", "tip5"]
    for kept in ("tip3", "tip5"):
        assert new["pages"][kept] == old["pages"][kept]  # 날짜, 커밋, 지문까지 그대로
    tip4 = new["pages"]["tip4"]
    # 같은 코드로 잰 예전 실행은 새 부분에 이어 둡니다(measuring/history.py).
    assert tip4 == history.carry(old["pages"]["tip4"], run.document["pages"]["tip4"])
    assert tip4["measured"]["date"] != "2030-01-02T03:04:05Z"
    assert tip4["measured"]["earlier_runs"] == [
        {
            "date": old["pages"]["tip4"]["measured"]["date"],
            "seed": old["pages"]["tip4"]["measured"]["seed"],
        }
    ]
    assert tip4["benchmarks"][0]["median_s"] == 0.01
    [kept_locally] = local.glob("*.json")  # 측정은 발행과 별도로 test-output/에도 남습니다
    assert list(results_file.load(kept_locally)["pages"]) == ["tip4"]


def test_the_same_cpu_model_with_other_flags_publishes_its_own_file(tmp_path, local):
    # 이슈 40: 모델 이름이 같아도 명령어 확장이 다르면(AVX-512를 숨긴 VM) 거절하지 않고 따로 씁니다.
    path, before = publish_old(tmp_path, "tip3", "tip4", cpu_flags=["avx2", "avx512f", "amx_bf16"])
    run = new_run(tmp_path, "tip4")
    assert measurement.finish(run) is True
    assert path.read_bytes() == before  # 다른 기계의 파일은 그대로입니다
    written = [p for p in (tmp_path / "results").glob("*.json") if p != path]
    assert [list(results_file.load(p)["pages"]) for p in written] == [["tip4"]]


@pytest.mark.parametrize(
    "device",
    [
        {"torch": "2.0.0+cpu"},
        {"cpu_cores": 64},
    ],  # fmt: skip
)
def test_a_file_from_another_machine_model_or_torch_version_is_not_merged(tmp_path, local, device):
    path, before = publish_old(tmp_path, "tip3", "tip4", **device)
    run = new_run(tmp_path, "tip4")
    assert measurement.finish(run) is False
    assert path.read_bytes() == before
    [field] = device
    text = "\n".join(run.messages)
    assert "장치 또는 torch 버전이 다릅니다" in text and field in text
    assert f"발행하지 못한 측정은 {local}에 남겼습니다" in text
    assert list(local.glob("*.json"))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda run: setattr(run.pages["tip4"], "failed", 1), "실패한 측정이 1개 있습니다"),
        (lambda run: setattr(run.pages["tip4"], "skipped_by_limit", 2), "시간 한도에 걸려 2개"),
        (lambda run: run.pages["tip4"].benchmarks.__setitem__(
            slice(None), [e for e in run.pages["tip4"].benchmarks if e["group"] != "zeros"]),
         "잰 적도, 재지 않은 이유도 없는 묶음이 있습니다: zeros"),
        (lambda run: (run.pages["tip4"].benchmarks.__setitem__(
            slice(None), [e for e in run.pages["tip4"].benchmarks if e["group"] != "arange"]),
            run.record_not_measured("tip4", "arange", "건너뜀")),
         "예전에 잰 묶음을 이번에는 재지 않았습니다: arange"),
    ],
)  # fmt: skip
def test_a_page_measured_less_than_it_replaces_is_refused_and_the_rest_published(
    tmp_path, local, change, reason
):
    path, _ = publish_old(tmp_path, "tip3", "tip4")
    old = results_file.load(path)
    run = new_run(tmp_path, "tip3", "tip4")
    change(run)
    assert measurement.finish(run) is False
    assert any(m.startswith(f"발행하지 않은 페이지 · tip4: {reason}") for m in run.messages)
    new = results_file.load(path)
    assert new["pages"]["tip4"] == old["pages"]["tip4"]
    published = history.carry(old["pages"]["tip3"], run.document["pages"]["tip3"])
    assert new["pages"]["tip3"] == published  # 끝까지 잰 페이지는 발행됩니다


def test_a_group_dropped_by_a_code_change_is_published(tmp_path, local):
    # 벤치마크를 고쳐 묶음을 더는 재지 않으면(예: 이 CPU에서는 천장이 아님) 바뀐 코드를 따릅니다.
    path, _ = publish_old(tmp_path, "tip4")
    old = results_file.load(path)
    old["pages"]["tip4"]["measured"]["benchmark_sha256"] = "f" * 64  # 다른 벤치마크 코드가 잼
    results_file.write_atomically(path, old)
    run = new_run(tmp_path, "tip4")
    keep = [e for e in run.pages["tip4"].benchmarks if e["group"] != "arange"]
    run.pages["tip4"].benchmarks[:] = keep
    run.record_not_measured("tip4", "arange", "이 장치에서는 재지 않습니다")
    assert measurement.finish(run) is True, run.messages
    assert "arange" not in {
        e["group"] for e in results_file.load(path)["pages"]["tip4"]["benchmarks"]
    }


def test_a_refused_run_leaves_the_file_byte_identical(tmp_path, local):
    path, before = publish_old(tmp_path, "tip3", "tip4")
    run = new_run(tmp_path, "tip4")
    run.pages["tip4"].failed = 1
    assert measurement.finish(run) is False
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # 임시 파일도 없습니다


def test_benchmark_skip_publishes_nothing(tmp_path, local):
    path, before = publish_old(tmp_path, "tip4")
    run = new_run(tmp_path, "tip4", benchmark_skipped=5)
    assert measurement.finish(run) is False
    assert path.read_bytes() == before
    assert any("--benchmark-skip으로 5개 측정을 건너뛰어" in m for m in run.messages)


def test_a_missing_file_is_created_with_only_the_measured_pages(tmp_path, local):
    run = new_run(tmp_path, "tip4")
    assert measurement.finish(run) is True
    [written] = (tmp_path / "results").glob("*.json")
    assert list(results_file.load(written)["pages"]) == ["tip4"]


def test_sweeps_that_were_not_rerun_are_kept(tmp_path):
    old = old_document(tmp_path, "tip4")
    old["pages"]["tip4"]["sweeps"] = {"size": {"points": "예전 스윕"}}
    run = new_run(tmp_path, "tip4")
    new = measurement.build_document(run)
    merged, refused = measurement.merge(old, new, run)
    assert refused == [] and merged["pages"]["tip4"]["sweeps"] == {"size": {"points": "예전 스윕"}}
    run.sweep = True  # --sweep: 이번 실행의 스윕(없음)이 예전 것을 바꿉니다
    merged, _ = measurement.merge(old, new, run)
    assert merged["pages"]["tip4"]["sweeps"] == {}


def test_an_unreadable_published_file_is_never_replaced(tmp_path, local):
    folder = tmp_path / "results"
    folder.mkdir()
    run = new_run(tmp_path, "tip4")
    path = folder / results_file.file_name(measurement.build_document(run))
    path.write_text('{"schema_version": 3, "oops"', encoding="utf-8")
    before = path.read_bytes()
    assert measurement.finish(run) is False
    assert path.read_bytes() == before
    assert any("예전 결과 파일을 읽지 못해 바꾸지 않았습니다" in m for m in run.messages)


def test_an_old_schema_file_is_replaced_only_by_a_run_of_every_page(tmp_path, local):
    run = new_run(tmp_path, "tip4")
    path = tmp_path / "results" / results_file.file_name(measurement.build_document(run))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"schema_version": 2, "benchmarks": []}), encoding="utf-8")
    assert measurement.read_published(path, run)[1].startswith("예전 결과 파일을 읽지 못해")
    every = new_run(tmp_path, *(page.id for page in registry.load()))
    assert measurement.read_published(path, every) == (None, None)


def test_a_dry_run_never_publishes_and_writes_where_it_was_told(tmp_path, local):
    run = new_run(tmp_path, "tip4", dry_run=True)
    assert measurement.finish(run) is True
    assert "드라이 런이라서 results/에는 쓰지 않았습니다." in run.messages
    assert [p.name for p in (tmp_path / "results").iterdir()] == [
        "dry-run-" + results_file.file_name(run.document | {"dry_run": False})
    ]
    assert not local.exists()


def test_an_unwritable_results_folder_keeps_the_measurement_locally(tmp_path, local):
    blocker = tmp_path / "a-file"
    blocker.write_text("폴더가 아니라 파일입니다", encoding="utf-8")
    run = new_run(tmp_path, "tip4", results_dir=blocker / "results")
    assert measurement.finish(run) is False
    text = "\n".join(run.messages)
    assert "에 쓰지 못했습니다" in text and f"발행하지 못한 측정은 {local}에 남겼습니다" in text
    [kept] = local.glob("*.json")
    assert results_file.load(kept)["pages"]["tip4"]


def test_a_ceiling_that_was_never_measured_is_not_pointed_at(tmp_path, local):
    run = new_run(tmp_path, "tip4")
    run.pages["tip4"].benchmarks[1]["ceiling"] = "device-copy"  # 천장 측정이 실패해 없는 key
    assert measurement.finish(run) is True
    assert any("천장으로 잰 적이 없는 key" in m and "device-copy" in m for m in run.messages)
    assert all(e["ceiling"] is None for e in run.document["pages"]["tip4"]["benchmarks"])


def _publish_many(tmp_path, page_id, rounds):
    run = new_run(tmp_path, page_id)
    doc = measurement.build_document(run)
    for _ in range(rounds):
        measurement.publish(run, copy.deepcopy(doc))


def test_two_processes_publishing_at_once_leave_a_valid_file(tmp_path):
    path, _ = publish_old(tmp_path, "tip3", "tip4")
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_publish_many, args=(tmp_path, page_id, 25))
        for page_id in ("tip3", "tip4")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    doc = results_file.load(path)  # 반쯤 쓴 파일이나 섞인 파일이면 여기서 실패합니다
    assert set(doc["pages"]) == {"tip3", "tip4"}
    assert [p.name for p in path.parent.iterdir()] == [path.name]
