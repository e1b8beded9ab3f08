"""torchdoctor의 규칙: 심어 둔 문제가 있는 작은 작업마다 맞는 페이지와 줄을 찾고, 사이트를 따른
깨끗한 작업에서는 아무것도 찾지 않는지(거짓 양성은 결함입니다). 작업은 이 프로세스 안에서 API로
돌립니다(torch를 한 번만 가져옵니다). CUDA 규칙은 합성한 증거로 논리만 돌려 봅니다.
"""

from __future__ import annotations

import contextlib
import copy
import io
from pathlib import Path

import pytest
import torch

from torchdoctor import catalog, doctor, rules, runner

JOBS = Path(__file__).with_name("doctor_jobs")


def planted_lines(job: str) -> list[int]:
    """작업 파일에서 `# PLANT` 표시가 있는 줄 번호들."""
    text = (JOBS / f"{job}.py").read_text(encoding="utf-8").splitlines()
    return [number for number, line in enumerate(text, 1) if "# PLANT" in line]


def run_job(job: str, **options):
    """작업을 진단기 안에서 돌리고 (보고서, 작업이 표준 출력에 쓴 것)을 돌려줍니다."""
    settings = {"skip_steps": 1, "steps": 5, "measure_fixes": False} | options
    watcher = doctor.Doctor(script=f"{job}.py", **settings)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            outcome = runner.run_script(str(JOBS / f"{job}.py"), [], watcher)
    finally:
        torch.autograd.set_detect_anomaly(
            False
        )  # anomaly.py가 켠 전역 상태를 다음 작업에 넘기지 않습니다
    assert outcome.status == "finished", outcome
    return watcher.report(), printed.getvalue()


@pytest.fixture(scope="module")
def clean():
    report, _ = run_job("clean_loop")
    return report


def found(report, rule: str) -> list[dict]:
    return [item for item in report.findings if item["rule"] == rule]


def fine_rules(report) -> set[str]:
    return {item["rule"] for item in report["fine"]}


CASES = [
    # (작업, 규칙, 페이지)
    ("sync_loop", "host-sync", "tip3"),
    ("host_tensors", "host-tensor-move", "tip4"),
    ("data_parallel", "data-parallel", "tip5"),
    ("fp32_mlp", "fp32-matmul", "tip6"),
    ("fp32_mlp", "fused-optimizer", "fused-optimizers"),
    ("anomaly", "debug-tools", "no-autograd-eval"),
    ("eval_autograd", "eval-autograd", "no-autograd-eval"),
    ("attention", "attention", "sdpa"),
]


@pytest.mark.parametrize(("job", "rule", "page"), CASES)
def test_each_planted_problem_is_found_at_its_line_with_its_page(job, rule, page, clean):
    report, _ = run_job(job)
    items = found(report, rule)
    assert items, report
    assert {item["page"] for item in items} == {page}
    lines = {item["line"] for item in items}
    assert lines & set(planted_lines(job)), (lines, planted_lines(job))
    assert all(item["file"].endswith(f"{job}.py") for item in items)
    # 깨끗한 작업에서는 같은 규칙이 돌았고(건너뛰지 않고) 아무것도 찾지 않았습니다
    assert not found(clean, rule)
    assert rule in fine_rules(clean)


def test_sync_loop_finds_both_item_and_bool_each_once_per_step():
    report, _ = run_job("sync_loop")
    calls = {item["evidence"]["call"]: item for item in found(report, "host-sync")}
    assert set(calls) == {"`.item()`", "`bool(텐서)`/`if 텐서`"}
    assert all(item["evidence"]["per_step"] == 1 for item in calls.values())
    assert all("GPU에서라면" in item["message"] for item in calls.values())  # CPU에서 쓰는 말


@pytest.mark.slow
def test_syncs_inside_a_lightning_module_are_found_at_the_training_step_line():
    pytest.importorskip("lightning")
    report, _ = run_job("sync_lightning")
    items = found(report, "host-sync")
    assert [item["line"] for item in items] == planted_lines("sync_lightning")
    assert "클로저" in " ".join(report["notes"])  # Lightning은 옵티마이저에 클로저를 넘깁니다


def test_the_clean_job_gets_no_finding_at_all(clean):
    assert clean.findings == [], clean.findings
    assert not clean["errors"]


def test_a_library_sync_inside_torch_optim_is_not_blamed_on_the_readers_step_line():
    # AdamW의 for-loop 경로는 스텝 값을 `.item()`으로 읽습니다: 독자가 그 줄에서 고칠 수 없습니다.
    report, _ = run_job("fp32_mlp")
    assert not found(report, "host-sync")


def test_the_doctor_does_not_change_what_the_job_prints():
    # 난수 상태, 데이터 순서, 모델, 옵티마이저가 같으면 손실이 바이트까지 같습니다.
    _, with_doctor = run_job("clean_loop", measure_fixes=True)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = compile((JOBS / "clean_loop.py").read_text(), str(JOBS / "clean_loop.py"), "exec")
        exec(code, {"__name__": "__main__"})
    assert with_doctor == printed.getvalue()
    assert with_doctor.strip()


@pytest.mark.slow
def test_the_slow_loader_is_found_and_its_fix_measured_faster_on_this_machine():
    # 예산은 넉넉히: 다른 xdist 작업자가 코어 하나를 쓰는 동안에는 라운드 비율이 1 근처로
    # 흔들려 구간이 넓어지므로(25초에서 한 번 0.99–1.26) 더 잽니다. 조용하면 일찍 멈춥니다.
    report, _ = run_job("slow_loader", measure_fixes=True, fix_budget_s=40.0)
    (item,) = found(report, "data-wait")
    assert item["page"] == "tip1" and item["line"] in planted_lines("slow_loader")
    assert item["share"] > 0.5
    measured = item["measured"]
    assert set(measured) >= {"ratio", "low", "high"}
    assert measured["low"] > 1.0, measured  # 이슈가 바라는 판정: 워커를 늘린 로더가 빠름
    # 워커를 띄우는 한 번의 비용은 정상 상태의 비율과 따로, 되찾는 배치 수와 함께 알립니다.
    assert measured["start_s"] > 0 and measured["payback_batches"] >= 1, measured
    assert "persistent_workers=True" in measured["code"] and "pin_memory" not in measured["code"]


def test_the_loader_measurement_keeps_the_random_state(monkeypatch):
    from torchdoctor import fixes

    dataset = torch.utils.data.TensorDataset(torch.arange(64.0))
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
    recipe = doctor.recipe_of(loader)
    info = {"num_workers": 0, "window_s": 0.01, "window_batches": 10}
    monkeypatch.setattr(
        fixes, "candidate_workers", lambda current: 0
    )  # 워커를 띄우지 않는 빠른 시험
    torch.manual_seed(3)
    expected = torch.rand(3)
    torch.manual_seed(3)
    result = fixes.measure_loader(recipe, {"loader": info, "device": "cpu"}, budget_s=0.5)
    assert torch.equal(torch.rand(3), expected)
    assert {"ratio", "low", "high", "verdict", "text"} <= set(result)


# ----- 합성한 증거: CUDA 규칙과 문턱 -----
BASE = {
    "device": "cuda",
    "gpu": {"name": "가짜 GPU", "capability": [9, 0]},
    "steps_seen": 30,
    "call_steps": 2,
    "step_s": [0.01] * 10,
    "data_s": [0.0] * 10,
    "optimizer_s": [],
    "loader": {
        "num_workers": 4,
        "pin_memory": True,
        "persistent_workers": True,
        "prefetch_factor": 2,
        "dataset": "D",
        "file": "t.py",
        "line": 3,
    },
    "syncs": [],
    "moves": [],
    "attention": [],
    "data_parallel": [],
    "eval_autograd": [],
    "optimizers": [],
    "ops": {
        "ops": 50,
        "op_s": 0.009,
        "median_op_s": 1e-4,
        "matmul_s": {"fp32": 0.001, "low": 0.0, "other": 0.0},
        "matmul_sites": [],
        "conv": {"count": 0, "nchw": 0, "shapes": 0},
    },
    "op_step_s": 0.01,
    "flags": {"tf32_matmul": True, "cudnn_benchmark": True},
    "debug": {},
}


def evidence(**changes) -> dict:
    ev = copy.deepcopy(BASE)
    for path, value in changes.items():
        target = ev
        *heads, last = path.split("__")
        for head in heads:
            target = target[head]
        target[last] = value
    return ev


CUDA_CASES = [
    # (규칙, 문제가 있는 증거)
    ("unpinned-batches", {"loader__pin_memory": False, "data_s": [0.005] * 10}),
    (
        "tf32-off",
        {"flags__tf32_matmul": False, "ops__matmul_s": {"fp32": 0.006, "low": 0, "other": 0}},
    ),
    ("launch-bound", {"ops__ops": 900, "ops__median_op_s": 5e-6, "ops__op_s": 0.002}),
    (
        "cudnn-benchmark",
        {"flags__cudnn_benchmark": False, "ops__conv": {"count": 10, "nchw": 0, "shapes": 1}},
    ),
    ("channels-last", {"ops__conv": {"count": 10, "nchw": 10, "shapes": 1}}),
]


@pytest.mark.parametrize(("rule", "changes"), CUDA_CASES)
def test_cuda_rules_find_their_problem_on_synthetic_evidence_and_nothing_without_it(rule, changes):
    checks = rules.evaluate(evidence(**changes))
    (item,) = checks[rule].findings
    assert item["page"] == catalog.BY_KEY[rule].page
    assert item["unverified"] == catalog.NOT_RUN_ON_GPU  # GPU 경로를 검증했다고 말하지 않습니다
    clean_checks = rules.evaluate(evidence())
    assert not clean_checks[rule].findings and clean_checks[rule].fine


def test_cuda_rules_are_skipped_not_fine_on_a_cpu():
    ev = evidence(device="cpu", gpu=None)
    checks = rules.evaluate(ev)
    for rule in catalog.RULES:
        if rule.cuda_only:
            assert checks[rule.key].skipped and not checks[rule.key].findings


def test_tf32_rule_stays_quiet_on_a_gpu_without_tf32():
    changes = {
        "flags__tf32_matmul": False,
        "gpu__capability": [7, 0],
        "ops__matmul_s": {"fp32": 0.006, "low": 0, "other": 0},
    }
    assert not rules.evaluate(evidence(**changes))["tf32-off"].findings


def test_data_wait_thresholds_and_worker_split():
    cpu = {"device": "cpu", "gpu": None}
    waiting = dict(cpu, data_s=[0.005] * 10, loader__num_workers=0)
    checks = rules.evaluate(evidence(**waiting))
    assert [i["page"] for i in checks["data-wait"].findings] == ["tip1"]
    assert not checks["data-wait-workers"].findings
    with_workers = dict(cpu, data_s=[0.005] * 10)
    checks = rules.evaluate(evidence(**with_workers))
    assert [i["page"] for i in checks["data-wait-workers"].findings] == ["dataloader-workers"]
    quiet = dict(cpu, data_s=[0.0009] * 10, loader__num_workers=0)
    assert not rules.evaluate(evidence(**quiet))["data-wait"].findings


def test_numerics_changing_tips_say_the_loss_must_be_checked():
    for rule in catalog.RULES:
        if rule.numerics:
            assert rule.key in ("fp32-matmul", "tf32-off")
    changes = {"flags__tf32_matmul": False, "ops__matmul_s": {"fp32": 0.006, "low": 0, "other": 0}}
    (item,) = rules.evaluate(evidence(**changes))["tf32-off"].findings
    assert "손실도 확인" in item["message"]


def test_findings_are_ranked_by_measured_payoff_then_by_share():
    from torchdoctor.report import rank

    items = [
        {"share": 0.9, "measured": None},
        {"share": None, "measured": None},
        {"share": 0.3, "measured": {"ratio": 2.0, "verdict": "faster"}},
        {"share": 0.5, "measured": None},
    ]
    assert [item["share"] for item in rank(items)] == [0.3, 0.9, 0.5, None]


def test_a_fix_measured_slower_on_the_job_goes_last_and_says_to_keep_the_setting():
    # lightning_intro.py(메모리의 TensorDataset)에서 워커 2개가 0.19배였는데 맨 앞에 권했습니다.
    from torchdoctor.report import _details, rank

    measured = {"ratio": 0.19, "verdict": "slower", "what": "워커 0개 → 2개",
                "text": "0.19배 (0.18–0.20, 느려짐)"}  # fmt: skip
    slower = {"share": 0.41, "measured": measured}
    items = [slower, {"share": 0.07, "measured": None}, {"share": None, "measured": None}]
    assert rank(items)[-1] is slower
    assert "그대로 두세요" in " ".join(_details(slower))
    assert not any("그대로 두세요" in d for d in _details({"share": 0.07, "measured": None}))


# ----- 규칙과 사이트 -----
def test_every_rule_has_a_function_and_a_registry_page_that_is_built():
    from guide import registry

    pages = {page.id: page for page in registry.load()}
    assert set(rules.FUNCTIONS) == set(catalog.BY_KEY)
    for rule in catalog.RULES:
        assert rule.page in pages, rule
        assert (registry.ROOT / "docs" / pages[rule.page].doc).is_file(), rule


def test_the_json_report_has_the_fields_the_issue_names(tmp_path, clean):
    report, _ = run_job("sync_loop")
    path = report.json(str(tmp_path / "report.json"))
    import json

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    assert data["findings"] and data["fine"]
    for item in data["findings"]:
        assert {"page", "file", "line", "share", "measured", "message"} <= set(item)
    assert "찾은 것" in str(report)


def test_optimizers_made_at_the_same_line_are_reported_once():
    opt = {
        "class": "SGD",
        "module": "torch.optim.sgd",
        "fused": None,
        "foreach": None,
        "has_fused": True,
        "devices": ["cpu"],
        "params": 2,
        "file": "t.py",
        "line": 5,
    }
    ev = evidence(device="cpu", gpu=None, optimizers=[opt, dict(opt), dict(opt, line=9)])
    assert [i["line"] for i in rules.evaluate(ev)["fused-optimizer"].findings] == [5, 9]


# ----- CUDA 규칙의 문턱: 변이 시험이 남긴 곳(하나만 바꾼 증거로 양쪽을 봅니다) -----
TF32_PROBLEM = {"flags__tf32_matmul": False, "ops__matmul_s": {"fp32": 0.006, "low": 0, "other": 0}}


def tf32(**changes):
    return rules.evaluate(evidence(**(TF32_PROBLEM | changes)))["tf32-off"]


def test_tf32_rule_is_quiet_when_tf32_is_on_even_if_fp32_matmul_dominates():
    check = tf32(flags__tf32_matmul=True)
    assert not check.findings and check.fine == "TF32가 켜져 있습니다"


def test_tf32_rule_starts_at_compute_capability_8_and_at_a_30_percent_share():
    assert tf32(gpu__capability=[8, 0]).findings  # A100은 TF32가 있습니다
    assert tf32(gpu__capability=None).fine == "이 GPU에는 TF32가 없습니다"
    at_bound = {"fp32": 0.3 * 0.009, "low": 0, "other": 0}
    assert tf32(ops__matmul_s=at_bound).findings  # 문턱(30%)부터 알립니다
    below = {"fp32": 0.29 * 0.009, "low": 0, "other": 0}
    assert tf32(ops__matmul_s=below).fine == "fp32 행렬 곱이 GPU 시간의 29%"


def test_tf32_rule_names_the_line_of_the_longest_fp32_matmul():
    site = [{"file": "train.py", "line": 12, "seconds": 0.005}]
    (item,) = tf32(ops__matmul_sites=site).findings
    assert (item["file"], item["line"]) == ("train.py", 12)
    assert 0 < item["share"] <= 1


def test_cuda_op_rules_are_skipped_without_an_op_probe_step():
    for key in ("tf32-off", "launch-bound", "cudnn-benchmark", "channels-last"):
        assert (
            rules.evaluate(evidence(ops=None))[key].skipped == "연산 탐침 스텝에 이르지 못했습니다"
        )
    assert tf32(ops__op_s=0).skipped == "연산 탐침 스텝에 이르지 못했습니다"
    on_cpu = rules.evaluate(evidence(device="cpu", gpu=None))
    assert on_cpu["tf32-off"].skipped == on_cpu["launch-bound"].skipped == "CUDA에서만 봅니다"


LAUNCH_PROBLEM = {"ops__ops": 900, "ops__median_op_s": 5e-6, "ops__op_s": 0.002}


def launch(**changes):
    return rules.evaluate(evidence(**(LAUNCH_PROBLEM | changes)))["launch-bound"]


def test_launch_bound_needs_many_short_ops_and_an_idle_gpu_each_at_its_bound():
    assert launch(ops__ops=201).findings and not launch(ops__ops=200).findings
    assert launch(ops__median_op_s=19e-6).findings and not launch(ops__median_op_s=20e-6).findings
    assert launch(ops__op_s=0.0049).findings and not launch(ops__op_s=0.005).findings
    (item,) = launch().findings
    assert item["share"] == pytest.approx(0.8)  # GPU가 쉰 몫(1 − 0.002/0.01)
    assert "900개" in item["message"] and "5 µs" in item["message"] and "20%" in item["message"]
    assert launch(ops__ops=200).fine == "연산 200개, GPU가 일한 몫 20%"


# ----- CUDA 증거: GPU 시계, 동기화 경고, 프로파일러 한 스텝(문제가 있는 증거와 없는 증거) -----
def cuda_wait(**changes):
    """CUDA 작업: 호스트 시계로는 60%를 기다렸는데 GPU 시계로는 10%만 쉰 창(이슈의 예)."""
    base = {
        "loader__num_workers": 0,
        "loader__pin_memory": False,
        "data_s": [0.006] * 10,
        "gpu_step_s": [0.01] * 10,
        "gpu_data_s": [0.001] * 10,
    }
    return rules.evaluate(evidence(**(base | changes)))


def test_on_cuda_the_data_rule_prefers_the_gpu_clock_and_says_which_clock_measured_it():
    (item,) = cuda_wait()["data-wait"].findings
    assert item["share"] == 0.1  # 호스트 시계의 60%가 아니라
    assert item["evidence"] == {
        "data_share": 0.1,
        "num_workers": 0,
        "clock": "gpu",
        "host_data_share": 0.6,
    }
    assert item["message"].endswith(rules.CLOCK_NOTE["gpu"])
    assert item["message"].startswith("스텝 시간의 10%를")
    assert item["unverified"] == catalog.NOT_RUN_ON_GPU  # GPU 시계는 GPU에서 아직 돌려 보지 않음
    below = cuda_wait(gpu_data_s=[0.00099] * 10)["data-wait"]
    assert not below.findings
    assert below.fine == "다음 배치를 기다린 몫 10% (기준 10% 미만, GPU 시계)"
    with_workers = cuda_wait(loader__num_workers=2)["data-wait-workers"]
    (item,) = with_workers.findings
    assert item["evidence"]["clock"] == "gpu" and item["share"] == 0.1


def test_on_cuda_without_gpu_events_the_data_rule_says_the_host_clock_may_overstate():
    for missing in ({"gpu_step_s": None, "gpu_data_s": None}, {"gpu_step_s": [0.0] * 10}):
        (item,) = cuda_wait(**missing)["data-wait"].findings
        assert item["share"] == 0.6
        assert item["evidence"] == {
            "data_share": 0.6,
            "num_workers": 0,
            "clock": "host",
            "host_data_share": 0.6,
        }
        assert item["message"].endswith(rules.CLOCK_NOTE["host"])
        assert item["unverified"] is None
    quiet = cuda_wait(gpu_step_s=None, data_s=[0.0009] * 10)["data-wait"]
    assert quiet.fine == "다음 배치를 기다린 몫 9% (기준 10% 미만, 호스트 시계)"


def test_on_a_cpu_the_data_rule_ignores_gpu_values_and_keeps_its_words():
    ev = evidence(device="cpu", gpu=None, loader__num_workers=0, data_s=[0.006] * 10)
    ev |= {"gpu_step_s": [0.01] * 10, "gpu_data_s": [0.0] * 10}
    (item,) = rules.evaluate(ev)["data-wait"].findings
    assert item["share"] == 0.6 and item["evidence"] == {"data_share": 0.6, "num_workers": 0}
    assert "시계" not in item["message"] and item["unverified"] is None
    ev["data_s"] = [0.0009] * 10
    assert rules.evaluate(ev)["data-wait"].fine == "다음 배치를 기다린 몫 9% (기준 10% 미만)"


PAGEABLE = {"count": 2, "seconds": 0.0004}


def test_the_pin_rule_names_the_pageable_copies_the_profiled_step_saw():
    checks = cuda_wait(gpu_data_s=[0.003] * 10, profile={"pageable_htod": PAGEABLE})
    (item,) = checks["unpinned-batches"].findings
    assert item["evidence"] == {
        "data_share": 0.3,
        "clock": "gpu",
        "host_data_share": 0.6,
        "pageable_htod": 2,
        "pageable_s": 0.0004,
    }
    assert "호스트→장치 복사가 2번(400 µs) 있었습니다" in item["message"]
    assert item["message"].endswith(rules.CLOCK_NOTE["gpu"]) and item["share"] == 0.3


def test_the_pin_rule_stays_quiet_when_the_profiled_step_copied_nothing_pageable():
    none = {"count": 0, "seconds": 0.0}
    check = cuda_wait(gpu_data_s=[0.003] * 10, profile={"pageable_htod": none})["unpinned-batches"]
    assert not check.findings
    assert check.fine == (
        "프로파일러로 기록한 한 스텝에 고정되지 않은 메모리에서 온 호스트→장치 복사가 없습니다"
    )
    low = cuda_wait(profile={"pageable_htod": PAGEABLE}, gpu_data_s=[0.00099] * 10)
    assert (
        low["unpinned-batches"].fine
        == "다음 배치를 기다린 몫 10%(GPU 시계): 복사가 병목이 아닙니다"
    )
    (item,) = cuda_wait(gpu_data_s=[0.001] * 10, profile=None)["unpinned-batches"].findings
    assert "pageable_htod" not in item["evidence"] and "번(" not in item["message"]


def sync_row(line, per_step=1.0, seconds=None, file="t.py"):
    return {
        "file": file,
        "line": line,
        "count": 2,
        "per_step": per_step,
        "seconds_per_step": seconds,
    }


def test_on_cuda_the_sync_rule_reports_warned_lines_the_call_watch_could_not_see():
    ev = evidence(cuda_syncs=[sync_row(7, seconds=0.003), sync_row(8, per_step=0.99)])
    (item,) = rules.evaluate(ev)["host-sync"].findings  # 스텝마다 한 번이 안 되는 줄 8은 빼고
    assert (item["file"], item["line"]) == ("t.py", 7)
    assert item["evidence"] == {
        "per_step": 1.0,
        "call": None,
        "source": "set_sync_debug_mode",
        "seconds_per_step": 0.003,
    }
    assert '`set_sync_debug_mode("warn")`가 이 줄에서 스텝마다 1번' in item["message"]
    assert "스텝마다 3 ms입니다" in item["message"]
    assert item["unverified"] == catalog.NOT_RUN_ON_GPU


def test_a_line_both_probes_saw_is_reported_once_with_its_measured_wait():
    call = {"what": "`.item()`", "file": "t.py", "line": 7, "per_step": 1.0}
    ev = evidence(syncs=[call | {"seconds_per_step": 0.002}], cuda_syncs=[sync_row(7)])
    (item,) = rules.evaluate(ev)["host-sync"].findings
    assert item["evidence"] == {"per_step": 1.0, "call": "`.item()`", "seconds_per_step": 0.002}
    assert "스텝마다 2 ms입니다" in item["message"]
    assert item["unverified"] == catalog.NOT_RUN_ON_GPU
    other_file = evidence(syncs=[call], cuda_syncs=[sync_row(7, file="u.py")])
    assert [i["file"] for i in rules.evaluate(other_file)["host-sync"].findings] == ["t.py", "u.py"]
    (plain,) = rules.evaluate(evidence(syncs=[call]))["host-sync"].findings
    assert plain["evidence"] == {"per_step": 1.0, "call": "`.item()`"}
    assert "호스트 시간" not in plain["message"] and plain["unverified"] is None


def test_the_sync_rule_is_fine_on_cuda_without_warnings_and_ignores_them_on_a_cpu():
    check = rules.evaluate(evidence(cuda_syncs=[sync_row(8, per_step=0.5)]))["host-sync"]
    assert check.fine == (
        "탐침 스텝 2개에서 스텝마다 부른 동기화 호출 없음,"
        ' `set_sync_debug_mode("warn")`가 스텝마다 알린 동기화도 없음'
    )
    without = rules.evaluate(evidence())["host-sync"]  # 동기화 경고를 잡지 않은 증거
    assert without.fine == "탐침 스텝 2개에서 스텝마다 부른 동기화 호출 없음"
    on_cpu = evidence(device="cpu", gpu=None, cuda_syncs=[sync_row(7)])
    assert not rules.evaluate(on_cpu)["host-sync"].findings


def profiled(idle, short):
    return {"profile": {"idle_share": idle, "kernels": {"short_share": short}}}


def test_launch_bound_reads_the_profiled_steps_idle_share_and_short_kernels_at_their_bounds():
    (item,) = launch(**profiled(0.51, 0.51)).findings
    assert item["share"] == 0.51 and item["evidence"] == {"idle_share": 0.51, "short_share": 0.51}
    assert "프로파일러로 기록한 한 스텝에서 커널의 51%가 20 µs보다 짧아" in item["message"]
    assert "GPU가 스텝의 49%만 일합니다" in item["message"]
    assert (
        launch(**profiled(0.5, 0.51)).fine == "연산 900개, GPU가 일한 몫 50% (프로파일러 한 스텝)"
    )
    assert not launch(**profiled(0.51, 0.5)).findings  # 짧은 커널이 절반을 넘어야 합니다
    assert not launch(ops__ops=200, **profiled(0.9, 0.9)).findings


def test_the_profiled_step_outweighs_the_op_probe_for_launch_bound():
    # 연산 탐침으로는 GPU가 90% 일했지만(op_s 0.009 / 0.01), 프로파일러의 시간표로는 60%를 쉽니다
    (item,) = launch(ops__op_s=0.009, **profiled(0.6, 0.9)).findings
    assert item["share"] == 0.6
    # 연산 탐침으로는 20%만 일했지만, 프로파일러로는 10%만 쉽니다
    assert launch(**profiled(0.1, 0.9)).fine == "연산 900개, GPU가 일한 몫 90% (프로파일러 한 스텝)"
    # 연산 탐침으로는 중앙값이 길지만(30 µs), 커널의 대부분이 짧습니다
    assert launch(ops__median_op_s=30e-6, **profiled(0.6, 0.9)).findings
    # 커널이 없는 기록(짧은 몫 없음): 중앙값으로 봅니다
    (item,) = launch(**profiled(0.6, None)).findings
    assert "중앙값이 5 µs라" in item["message"] and item["evidence"] == {"idle_share": 0.6}
    assert not launch(ops__median_op_s=30e-6, **profiled(0.6, None)).findings
