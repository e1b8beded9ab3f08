"""benchmarks/environment.py의 테스트: 결과 파일 이름과 커밋 기록."""

import subprocess

import pytest
import torch

from benchmarks import environment, results_file
from tests.site_build import ROOT


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"device_kind": "cuda", "device_name": "NVIDIA H200"}, "nvidia-h200"),
        ({"device_kind": "cuda", "device_name": "NVIDIA A100-SXM4-80GB"}, "nvidia-a100-sxm4-80gb"),
        (
            {"device_kind": "cpu", "cpu_model": "AMD EPYC", "usable_cores": 2},
            "cpu-amd-epyc-2cores",
        ),
        (
            {
                "device_kind": "cpu",
                "cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
                "usable_cores": 16,
            },
            "cpu-intel-xeon-platinum-8370c-16cores",
        ),
    ],
)
def test_results_file_is_named_after_the_device(env, name):
    assert environment.results_name(env) == name


def test_description_of_this_machine_is_a_valid_environment():
    env = environment.describe(torch.device("cpu"), ROOT)
    doc = {"schema_version": 2, "dry_run": True, "environment": env, "benchmarks": [],
           "not_measured": []}  # fmt: skip
    results_file.validate(doc, "this-machine")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert env["commit"] == head.stdout.strip()
    assert env["torch"] == torch.__version__ and env["device_kind"] == "cpu"


def test_a_copy_without_git_takes_the_commit_from_source_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    assert environment.git_state(tmp_path) == ("0123456789abcdef0123456789abcdef01234567", None)
    monkeypatch.setenv("SOURCE_COMMIT", "not-a-commit")
    assert environment.git_state(tmp_path) == (None, None)


def test_cpu_description_names_the_generation_and_the_isa_features(monkeypatch):
    info = (
        "model name\t: AMD EPYC\ncpu family\t: 25\nmodel\t\t: 17\n"
        "flags\t\t: fpu avx2 avx512f avx512_bf16 sse4_2\n"
    )
    monkeypatch.setattr(environment, "_cpuinfo", lambda: info)
    assert environment.cpu_model() == "AMD EPYC (family 25, model 17)"
    assert environment.cpu_flags() == ["avx2", "avx512f", "avx512_bf16"]
