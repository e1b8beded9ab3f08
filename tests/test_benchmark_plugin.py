"""benchmarks/plugin.py의 테스트: `pytest --benchmark`와 README의 GPU 명령이 약속대로 동작하는지.

모두 별도 pytest 프로세스로 실행하고, 결과 파일은 `--results-dir`로 임시 폴더에 쓰게 합니다.
어떤 경우에도 저장소의 `results/`가 바뀌지 않는지도 확인합니다.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import torch

from benchmarks import results_file
from benchmarks.plugin import stale_lines
from guide import registry
from tests.results_sample import SAMPLE_NAME, sample_document, write
from tests.site_build import ROOT

BENCH_TIP4 = "benchmarks/bench_tip4_create_on_device.py"
BENCH_TIP5 = "benchmarks/bench_tip5_ddp.py"
LOCAL = ROOT / "test-output" / "results"


def readme_gpu_command() -> list[str]:
    """README의 GPU 명령에서 pytest를 부르는 부분의 인자(`-m pytest benchmarks ...`)입니다."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.DOTALL)
    command = next(block for block in blocks if "--gpu" in block)
    return shlex.split(command.split("&&")[-1])[1:]  # 맨 앞의 `.venv/bin/python`을 뺍니다


def published_state() -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in (ROOT / "results").glob("*")
    }


def run_pytest(*args, cwd=ROOT, env=None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture
def results_untouched():
    before = published_state()
    yield
    assert published_state() == before, "results/가 바뀌었습니다"


def test_readme_gpu_command_is_the_one_documented():
    assert readme_gpu_command() == [
        "-m",
        "pytest",
        "benchmarks",
        "--benchmark",
        "--gpu",
        "--publish",
    ]


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="GPU가 있으면 드라이 런이 아니라 실제로 잽니다"
)
def test_gpu_command_dry_run_goes_end_to_end_on_cpu(tmp_path, results_untouched):
    result = run_pytest(*readme_gpu_command()[2:], "--dry-run", "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "측정 요약" in result.stdout
    assert "드라이 런이라서 results/에는 쓰지 않았습니다" in result.stdout
    [written] = tmp_path.glob("dry-run-*.json")
    doc = results_file.load(written)
    assert doc["dry_run"] is True
    # 레지스트리의 모든 페이지가 재거나 "재지 않음"(이유와 함께)으로 남습니다.
    assert results_file_pages(doc) == {page.id for page in registry.load()}


def results_file_pages(doc):
    return {entry["page"] for entry in doc["benchmarks"]} | {x["page"] for x in doc["not_measured"]}


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인할 수 있습니다")
def test_gpu_flag_without_cuda_fails_loudly_in_korean(tmp_path, results_untouched):
    result = run_pytest(*readme_gpu_command()[2:], "--results-dir", str(tmp_path))
    assert result.returncode != 0
    assert "--gpu: CUDA GPU를 찾지 못했습니다" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_benchmark_on_cpu_exits_zero_with_the_korean_skip_list(tmp_path, results_untouched):
    selection = [f"{BENCH_TIP4}::test_device_copy_ceiling", BENCH_TIP5]
    result = run_pytest(*selection, "--benchmark", "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:]
    summary = result.stdout[result.stdout.index("측정 요약") :]
    assert "팁 4: 텐서를 장치에서 바로 만들기" in summary and "장치 안 복사" in summary
    assert re.search(r"재지 않음\(DP 대 DDP\): .*GPU", summary)
    assert "test_dp_vs_ddp" not in summary
    [written] = tmp_path.glob("*.json")
    doc = results_file.load(written)
    [ceiling] = doc["benchmarks"]
    assert ceiling["rounds"] >= 7 and ceiling["metrics"]["gb_per_s"] > 0
    page = registry.by_id("tip4")
    assert ceiling["fingerprint"] == results_file.fingerprint(
        page.snippet_path, page.benchmark_path
    )


def test_publishing_a_partial_run_is_refused_but_the_measurement_is_kept(
    tmp_path, results_untouched
):
    result = run_pytest(BENCH_TIP5, "--benchmark", "--publish", "--results-dir", str(tmp_path))
    assert result.returncode == 1
    assert "전체 벤치마크를 실행했을 때만 results/에 씁니다" in result.stdout
    assert "측정 요약" in result.stdout
    assert list(tmp_path.iterdir()) == []  # 발행 폴더에는 쓰지 않고
    assert re.search(
        r"결과 파일을 썼습니다: .*test-output/results/", result.stdout
    )  # 로컬에 남깁니다


FAIL_CEILING_PLUGIN = """
def pytest_runtest_call(item):
    if "ceiling" in item.name:
        raise RuntimeError("천장 측정이 실패했습니다(테스트가 일부러 냄)")
"""


def test_a_failing_ceiling_still_leaves_the_other_measurements(tmp_path, results_untouched):
    (tmp_path / "fail_ceiling_plugin.py").write_text(FAIL_CEILING_PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    selection = [f"{BENCH_TIP4}::test_create", f"{BENCH_TIP4}::test_device_copy_ceiling"]
    out = tmp_path / "out"
    result = run_pytest(*selection, "-k", "rand or ceiling", "-p", "fail_ceiling_plugin",
                        "--benchmark", "--results-dir", str(out), env=env)  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stdout.split("측정 요약")[-1]
    assert "측정 요약" in result.stdout
    [written] = out.glob("*.json")
    doc = results_file.load(written)
    assert {e["key"] for e in doc["benchmarks"]} == {
        "rand-create-then-copy",
        "rand-create-on-device",
    }
    assert all(e["ceiling"] is None for e in doc["benchmarks"])  # 없는 천장을 가리키지 않습니다


def test_a_single_benchmark_run_by_node_id_writes_its_local_results(tmp_path, results_untouched):
    node = f"{BENCH_TIP4}::test_create[rand-recommended]"
    result = run_pytest(node, "--benchmark", "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "측정 요약" in result.stdout
    [written] = tmp_path.glob("*.json")
    [entry] = results_file.load(written)["benchmarks"]
    assert entry["ceiling"] is None and entry["role"] == "recommended"


PUBLISH_SUBSET_PLUGIN = """
import benchmarks.plugin as plugin

plugin._expected_modules = lambda: {"benchmarks.bench_tip5_ddp"}
"""


def test_an_unwritable_results_folder_keeps_the_measurement_locally(tmp_path, results_untouched):
    (tmp_path / "publish_subset_plugin.py").write_text(PUBLISH_SUBSET_PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    unwritable = tmp_path / "a-file"
    unwritable.write_text("폴더가 아니라 파일입니다", encoding="utf-8")
    before = set(LOCAL.glob("*.json")) if LOCAL.exists() else set()
    result = run_pytest(BENCH_TIP5, "-p", "publish_subset_plugin", "--benchmark", "--publish",
                        "--results-dir", str(unwritable / "results"), env=env)  # fmt: skip
    assert result.returncode == 1, result.stdout[-3000:]
    assert "에 쓸 수 없습니다" in result.stdout and "측정 요약" in result.stdout
    assert "발행하지 못해 측정을 로컬 결과 폴더에 남깁니다" in result.stdout
    written = re.search(r"결과 파일을 썼습니다: (\S+)", result.stdout)[1]
    assert written.startswith(str(LOCAL)) and results_file.load(written)["not_measured"]
    if written not in {str(p) for p in before}:
        os.unlink(written)


INTERRUPT_PLUGIN = """
def pytest_runtest_call(item):
    if "test_dp_vs_ddp" in item.name:
        raise KeyboardInterrupt
"""


def test_an_interrupted_run_writes_nothing(tmp_path, results_untouched):
    (tmp_path / "interrupt_plugin.py").write_text(INTERRUPT_PLUGIN, encoding="utf-8")
    earlier = write(tmp_path / "out" / "earlier.json", sample_document(ROOT))
    before = earlier.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    selection = [f"{BENCH_TIP4}::test_device_copy_ceiling", BENCH_TIP5]
    result = run_pytest(
        *selection, "-p", "interrupt_plugin", "--benchmark", "--results-dir", str(tmp_path / "out"),
        env=env,
    )  # fmt: skip
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout[-2000:]
    assert "실행이 중단되어 결과 파일을 쓰지 않았습니다" in result.stdout
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["earlier.json"]
    assert earlier.read_bytes() == before


def test_a_time_limit_skips_the_rest_and_refuses_to_publish(tmp_path, results_untouched):
    result = run_pytest(BENCH_TIP4, "-k", "ceiling or rand", "--benchmark", "--max-minutes",
                        "0.0001", "--results-dir", str(tmp_path))  # fmt: skip
    assert "시간 한도" in result.stdout
    [written] = tmp_path.glob("*.json")
    assert any("시간 한도" in x["reason"] for x in results_file.load(written)["not_measured"])


def test_a_small_dev_shm_stops_the_gpu_run_in_korean(monkeypatch):
    from benchmarks import plugin

    monkeypatch.setattr(
        plugin.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1, 1, 64 << 20)
    )
    assert "/dev/shm의 여유 공간이 64 MiB뿐입니다" in plugin._shm_problem()


def test_plain_pytest_runs_each_benchmark_once_without_timing(tmp_path, results_untouched):
    result = run_pytest(BENCH_TIP4, "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:]
    assert "측정 요약" not in result.stdout
    assert not re.search(r"benchmark: \d+ tests", result.stdout)  # 시간 표가 없습니다
    assert list(tmp_path.iterdir()) == []


def test_stale_results_are_listed(tmp_path):
    for name in ("snippets", "benchmarks"):
        shutil.copytree(ROOT / name, tmp_path / name)
    write(tmp_path / "results" / SAMPLE_NAME, sample_document(tmp_path))
    assert stale_lines(tmp_path) == []
    changed = tmp_path / "benchmarks" / "bench_tip4_create_on_device.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 바뀐 줄\n", encoding="utf-8")
    [line] = stale_lines(tmp_path)
    assert line.startswith(f"results/{SAMPLE_NAME} · tip4: 측정한 뒤 코드가 바뀌었습니다")
    assert "benchmarks/bench_tip4_create_on_device.py(바뀜)" in line
    (tmp_path / "results" / "broken.json").write_text("{}", encoding="utf-8")
    assert any(
        "broken.json의 schema_version: 필수 항목이 없습니다" in x for x in stale_lines(tmp_path)
    )
