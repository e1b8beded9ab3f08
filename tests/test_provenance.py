"""benchmarks/provenance.py의 테스트: 장치와 측정 조건의 기록, 코드의 지문, 오래된 결과 찾기.

오래된 결과는 레지스트리(guide/pages.toml)가 정한 스니펫과 벤치마크 경로로만 찾습니다. 결과 파일이
측정한 코드의 경로를 스스로 댈 자리는 없습니다(이슈 21: 경로를 믿으면 바뀐 스니펫이 "측정한 코드
그대로"로 보였습니다).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from guide import registry
from results_format import provenance, schema, validation
from tests.results_sample import cpu_document, sample_document
from tests.site_build import ROOT


def test_this_machines_description_is_a_valid_device_and_measured_block():
    page = registry.by_id("tip4")
    doc = {
        "schema_version": schema.SCHEMA_VERSION,
        "dry_run": True,
        "device": provenance.describe_device(torch.device("cpu")),
        "pages": {
            "tip4": {
                "measured": provenance.describe_measured(torch.device("cpu"), page, ROOT, 2026),
                "groups": {}, "benchmarks": [], "not_measured": [], "sweeps": {},
            }
        },
    }  # fmt: skip
    validation.validate(doc, "this-machine")
    device, measured = doc["device"], doc["pages"]["tip4"]["measured"]
    assert device["kind"] == "cpu" and device["count"] == 0 and device["torch"] == torch.__version__
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert measured["commit"] == head.stdout.strip() and measured["seed"] == 2026
    assert measured["snippet_sha256"] == provenance.sha256(page.snippet_path)
    assert measured["gomp_spincount"] == os.environ["GOMP_SPINCOUNT"]


@pytest.mark.slow  # pytest를 다른 프로세스로 돌립니다
@pytest.mark.parametrize(("readers_value", "seen"), [(None, "1000"), ("777", "777")])
def test_pytest_sets_the_openmp_spin_count_before_torch_loads(readers_value, seen):
    """libgomp가 불러올 때 읽은 값을 그 자신이 출력하게 해(OMP_DISPLAY_ENV) 확인합니다.
    루트 conftest.py가 torch보다 늦게 값을 정하면 기본값 300000이 보입니다.
    읽는 사람이 정한 값이 이깁니다."""
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    if readers_value:
        env["GOMP_SPINCOUNT"] = readers_value
    command = [sys.executable, "-m", "pytest", "--co", "-q", "-s", "-p", "no:cacheprovider",
               "tests/test_stats.py"]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"GOMP_SPINCOUNT = '{seen}'" in result.stderr


def test_a_copy_without_git_takes_the_commit_from_source_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_COMMIT", "0123456789ABCDEF0123456789abcdef01234567")
    assert provenance.git_state(tmp_path) == ("0123456789abcdef0123456789abcdef01234567", None)
    monkeypatch.setenv("SOURCE_COMMIT", "not-a-commit")
    assert provenance.git_state(tmp_path) == (None, None)


def test_cpu_description_names_the_generation_and_the_isa_features(monkeypatch):
    info = (
        "model name\t: AMD EPYC\ncpu family\t: 25\nmodel\t\t: 17\n"
        "flags\t\t: fpu avx2 avx512f avx512_bf16 sse4_2\n"
    )
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: info)
    assert provenance.cpu_model() == "AMD EPYC (family 25, model 17)"
    assert provenance.cpu_flags() == ["avx2", "avx512f", "avx512_bf16"]
    named = info.replace("AMD EPYC", "AMD EPYC 7763 64-Core Processor")
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: named)
    assert provenance.cpu_model() == "AMD EPYC 7763 64-Core Processor"  # 세대가 이름에 있습니다


def test_the_power_limit_tells_h200_sxm_and_nvl_apart(monkeypatch):
    answers = {"0": "700.00\n", "1": "600.00\n"}
    monkeypatch.setattr(provenance, "_run", lambda command: answers[command[1].split("=")[1]])
    assert provenance.power_limit_w(torch.device("cuda", 0)) == 700.0
    assert provenance.power_limit_w(torch.device("cuda", 1)) == 600.0
    monkeypatch.setattr(provenance, "_run", lambda command: None)  # nvidia-smi가 없으면 모름
    assert provenance.power_limit_w(torch.device("cuda", 0)) is None
    monkeypatch.setattr(provenance, "_run", lambda command: "[N/A]\n")
    assert provenance.power_limit_w(torch.device("cuda", 0)) is None
    assert provenance.power_limit_w(torch.device("cpu")) is None


def test_the_schema_has_no_place_for_the_measured_codes_own_paths():
    for fields in (schema.ENTRY, schema.MEASURED, schema.POINT, schema.DEVICE):
        assert not [name for name in fields if "snippet" in name and "sha256" not in name]
        assert "benchmark" not in fields and "fingerprint" not in fields


@pytest.fixture
def repository_copy(tmp_path, monkeypatch):
    """레지스트리의 ROOT를 복사본으로 돌려, 스니펫을 고쳐도 저장소는 그대로 둡니다."""
    for name in ("snippets", "benchmarks"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(registry, "ROOT", tmp_path)
    return tmp_path


def test_editing_a_snippet_or_a_benchmark_marks_only_its_page_stale(repository_copy):
    doc = sample_document(repository_copy)
    assert provenance.stale_pages(doc) == {}
    snippet = repository_copy / "snippets" / "tip4_create_on_device.py"
    snippet.write_text(snippet.read_text(encoding="utf-8") + "\n# 측정 뒤에 바뀐 줄\n", "utf-8")
    assert provenance.stale_pages(doc) == {"tip4": {"snippets/tip4_create_on_device.py": "바뀜"}}
    (repository_copy / "benchmarks" / "bench_tip3_avoid_syncs.py").unlink()
    stale = provenance.stale_pages(doc)
    assert stale["tip3"] == {"benchmarks/bench_tip3_avoid_syncs.py": "없음"}
    assert set(stale) == {"tip3", "tip4"}


def test_a_result_cannot_vouch_for_its_own_code(repository_copy):
    """예전 형식은 항목이 스니펫 경로를 댔습니다. 이제 결과 파일에는 경로가 없고 지문만 있습니다."""
    doc = cpu_document(repository_copy)
    assert "capstone_gpt" not in json.dumps(doc) and "snippets/" not in json.dumps(doc)
    snippet = repository_copy / "snippets" / "capstone_gpt.py"
    snippet.write_text(snippet.read_text(encoding="utf-8") + "\n# 바뀜\n", encoding="utf-8")
    assert provenance.stale_pages(doc) == {"capstone": {"snippets/capstone_gpt.py": "바뀜"}}


def test_code_hashes_are_the_registry_files_sha256(repository_copy):
    page = registry.by_id("tip6")
    assert page.snippet_path == repository_copy / "snippets" / "tip6_16bit.py"
    hashes = provenance.code_hashes(page)
    assert hashes == {
        "snippet_sha256": provenance.sha256(repository_copy / "snippets" / "tip6_16bit.py"),
        "benchmark_sha256": provenance.sha256(
            repository_copy / "benchmarks" / "bench_tip6_16bit.py"
        ),
    }
