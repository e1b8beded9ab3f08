"""torchdoctor/rules.py의 문턱과 독자가 보는 글: 손으로 만든 증거로 규칙 하나씩, 문턱의 양쪽과
정확한 문장을 봅니다. CUDA 규칙도 CPU에서 돌립니다(규칙은 torch를 가져오지 않습니다).

변이 시험(pyproject.toml의 [tool.mutmut])이 살려 둔 곳을 잡으려고 씁니다: 문턱에서 `<`와 `<=`가,
보고서의 문장과 JSON 값이 바뀌면 여기서 실패합니다.
"""

from __future__ import annotations

import copy

import pytest

from torchdoctor import catalog, rules

# 문제가 하나도 없는 CPU 작업의 증거. 시간은 재기 쉬운 값(스텝 1초)으로 둡니다.
CPU = {
    "device": "cpu",
    "gpu": None,
    "steps_seen": 30,
    "call_steps": 2,
    "step_s": [1.0],
    "data_s": [0.0],
    "optimizer_s": [],
    "loader": {
        "num_workers": 0,
        "pin_memory": False,
        "persistent_workers": False,
        "prefetch_factor": None,
        "dataset": "Squares",
        "file": "train.py",
        "line": 7,
    },
    "syncs": [],
    "moves": [],
    "attention": [],
    "data_parallel": [],
    "eval_autograd": [],
    "optimizers": [],
    "ops": {
        "ops": 50,
        "op_s": 1.0,
        "median_op_s": 1e-4,
        "matmul_s": {"fp32": 0.1, "low": 0.0, "other": 0.0},
        "matmul_sites": [],
        "conv": {"count": 0, "nchw": 0, "shapes": 0},
    },
    "op_step_s": 1.0,
    "flags": {"tf32_matmul": False, "cudnn_benchmark": False},
    "debug": {},
}
CUDA = dict(CPU, device="cuda", gpu={"name": "H100", "capability": [9, 0]})


def evidence(base: dict = CPU, **changes) -> dict:
    """base를 복사해 `ops__conv`처럼 `__`로 이은 경로의 값을 바꿉니다."""
    ev = copy.deepcopy(base)
    for path, value in changes.items():
        target = ev
        *heads, last = path.split("__")
        for head in heads:
            target = target[head]
        target[last] = value
    return ev


def cuda(**changes) -> dict:
    return evidence(CUDA, **changes)


def check(key: str, ev: dict) -> rules.Check:
    return rules.evaluate(ev)[key]


def only(key: str, ev: dict) -> dict:
    (item,) = check(key, ev).findings
    return item


def expected(key: str, message: str, **fields) -> dict:
    """규칙 key의 찾은 것 하나가 JSON에 쓰는 값 전부(바꾼 값만 fields로)."""
    rule = catalog.BY_KEY[key]
    item = {
        "rule": key,
        "page": rule.page,
        "title": rule.title,
        "file": None,
        "line": None,
        "share": None,
        "measured": None,
        "message": message,
        "evidence": {},
        "fix": rule.fix or None,
        "unverified": catalog.NOT_RUN_ON_GPU if rule.cuda_only else None,
    }
    return item | fields


# ----- 찾은 것 하나의 모양 -----
def test_a_finding_clamps_its_share_to_the_step_and_rounds_it_to_four_places():
    assert rules.finding("host-sync", "m", share=1.3)["share"] == 1.0
    assert rules.finding("host-sync", "m", share=-0.2)["share"] == 0.0
    assert rules.finding("host-sync", "m", share=0.123456)["share"] == 0.1235
    assert rules.finding("host-sync", "m")["share"] is None


def test_a_finding_carries_its_rule_page_fix_and_gpu_caveat():
    item = rules.finding("data-wait", "m", file="a.py", line=3, evidence={"k": 1})
    assert item == expected("data-wait", "m", file="a.py", line=3, evidence={"k": 1})
    assert item["fix"] == "loader" and item["unverified"] is None
    cuda_item = rules.finding("channels-last", "m")
    assert cuda_item["fix"] is None and cuda_item["unverified"] == "GPU에서 아직 실행해 보지 않음"
    assert cuda_item["evidence"] == {}


def test_only_numerics_changing_tips_append_the_loss_caveat():
    note = " 수치가 바뀌는 팁이므로 속도와 함께 손실도 확인해야 합니다."
    assert rules.finding("tf32-off", "m")["message"] == "m" + note
    assert rules.finding("host-sync", "m")["message"] == "m"


# ----- 데이터 기다림 -----
def test_data_wait_without_workers_names_the_share_the_dataset_and_the_loader_line():
    ev = evidence(step_s=[1.0], data_s=[0.123456])
    message = (
        "스텝 시간의 12%를 다음 배치를 기다리며 보냅니다. 로더가 `num_workers=0`이라"
        " 데이터셋 `Squares`의 일을 학습 프로세스가 혼자 합니다."
        " `num_workers`를 코어 수에 맞춰 늘려 보세요."
    )
    assert only("data-wait", ev) == expected(
        "data-wait",
        message,
        file="train.py",
        line=7,
        share=0.1235,
        evidence={"data_share": 0.1235, "num_workers": 0},
    )
    assert check("data-wait-workers", ev).fine == "로더의 워커가 0개라 이 규칙의 경우가 아닙니다"


def test_data_wait_with_even_one_worker_is_the_workers_rule():
    ev = evidence(data_s=[0.5], loader__num_workers=1, loader__prefetch_factor=2)
    message = (
        "워커가 1개인데도 스텝 시간의 50%를 다음 배치를 기다리며 보냅니다"
        " (`persistent_workers=False`, `prefetch_factor=2`). 워커를 늘리거나 에폭마다 워커를"
        " 다시 띄우지 않게 `persistent_workers=True`를 써 보세요."
    )
    assert only("data-wait-workers", ev) == expected(
        "data-wait-workers",
        message,
        file="train.py",
        line=7,
        share=0.5,
        evidence={"data_share": 0.5, "num_workers": 1},
    )
    assert check("data-wait", ev).fine == "로더의 워커가 1개라 이 규칙의 경우가 아닙니다"


@pytest.mark.parametrize("workers", [0, 3])
def test_data_wait_starts_at_exactly_ten_percent(workers):
    key = "data-wait-workers" if workers else "data-wait"
    at_bound = evidence(data_s=[0.1], loader__num_workers=workers)
    assert only(key, at_bound)["share"] == 0.1
    below = evidence(data_s=[0.0999], loader__num_workers=workers)
    assert check(key, below).fine == "다음 배치를 기다린 몫 10% (기준 10% 미만)"
    assert not check(key, below).findings


@pytest.mark.parametrize("key", ["data-wait", "data-wait-workers"])
def test_data_wait_is_skipped_without_a_loader_or_a_timed_window(key):
    no_loader = check(key, evidence(loader=None, data_s=[0.5]))
    assert no_loader.skipped == "시간 창에서 DataLoader로 배치를 읽지 않았습니다"
    for steps in ([], None, [0.0]):
        window = check(key, evidence(step_s=steps, data_s=[0.0]))
        assert window.skipped == "시간 창에 이르지 못했습니다" and not window.findings


def test_pinned_memory_is_asked_for_only_when_a_cuda_job_waits_for_batches():
    ev = cuda(data_s=[0.25], loader__num_workers=2)
    message = (
        "CUDA로 학습하는데 로더에 `pin_memory=True`가 없고, 스텝의 25%를 배치를 기다리며"
        " 보냅니다. 고정된 메모리(pinned memory)의 배치는 `.to(device, non_blocking=True)`로"
        " 계산과 겹쳐 복사할 수 있습니다. 이 몫은 호스트 시계로 잰 것이라 GPU가 실제로 쉰"
        " 시간보다 클 수 있습니다."
    )
    host_clock = {"data_share": 0.25, "clock": "host", "host_data_share": 0.25}
    item = expected(
        "unpinned-batches", message, file="train.py", line=7, share=0.25, evidence=host_clock
    )
    assert only("unpinned-batches", ev) == item
    assert check("unpinned-batches", cuda(data_s=[0.1])).findings  # 문턱(10%)부터
    below = check("unpinned-batches", cuda(data_s=[0.0999]))
    assert not below.findings
    assert below.fine == "다음 배치를 기다린 몫 10%(호스트 시계): 복사가 병목이 아닙니다"
    pinned = check("unpinned-batches", cuda(data_s=[0.5], loader__pin_memory=True))
    assert pinned.fine == "로더가 `pin_memory=True`입니다" and not pinned.findings


def test_pinned_memory_is_skipped_without_a_loader_or_a_window():
    why = "시간 창에서 DataLoader로 배치를 읽지 않았습니다"
    assert check("unpinned-batches", cuda(loader=None, data_s=[0.5])).skipped == why
    assert check("unpinned-batches", cuda(step_s=[], data_s=[])).skipped == why


# ----- 호스트와 장치 -----
SYNCS = [
    {"what": "`.item()`", "per_step": 2, "file": "train.py", "line": 12},
    {"what": "`.cpu()`", "per_step": 1.5, "file": "train.py", "line": 14},
]


def test_each_sync_call_is_one_finding_at_its_line_with_its_count():
    items = check("host-sync", evidence(syncs=SYNCS)).findings
    tail = (
        "CPU에서는 기다림이 없지만 GPU에서라면 호스트가 장치를 기다리는(동기화하는) 호출입니다."
        " 값을 장치에 모아 두었다가 가끔 한 번에 읽으세요."
    )
    assert items == [
        expected(
            "host-sync",
            f"스텝마다 `.item()` 호출이 2번 있습니다. {tail}",
            file="train.py",
            line=12,
            evidence={"per_step": 2, "call": "`.item()`"},
        ),
        expected(
            "host-sync",
            f"스텝마다 `.cpu()` 호출이 1.5번 있습니다. {tail}",
            file="train.py",
            line=14,
            evidence={"per_step": 1.5, "call": "`.cpu()`"},
        ),
    ]


def test_on_cuda_a_sync_is_said_to_wait_for_the_gpu():
    (item, _) = check("host-sync", cuda(syncs=SYNCS)).findings
    assert item["message"] == (
        "스텝마다 `.item()` 호출이 2번 있습니다. 호스트가 GPU의 일이 끝나기를 기다리는(동기화하는)"
        " 호출입니다. 값을 장치에 모아 두었다가 가끔 한 번에 읽으세요."
    )


def test_no_sync_in_the_readers_step_mentions_the_library_syncs_only_when_there_are_some():
    quiet = check("host-sync", evidence())
    assert quiet.fine == "탐침 스텝 2개에서 스텝마다 부른 동기화 호출 없음" and not quiet.findings
    library = check("host-sync", evidence(library_syncs_per_step=3))
    assert library.fine == (
        "탐침 스텝 2개에서 스텝마다 부른 동기화 호출 없음 (라이브러리 안에서 스텝당 3번)"
    )
    assert check("host-sync", evidence(syncs=None)).fine == quiet.fine


@pytest.mark.parametrize("key", ["host-sync", "host-tensor-move", "attention"])
def test_call_probe_rules_are_skipped_before_the_probe_step(key):
    skipped = check(key, evidence(call_steps=0, syncs=SYNCS))
    assert skipped.skipped == "호출 탐침 스텝에 이르지 못했습니다" and not skipped.findings


def test_a_tensor_made_on_the_host_and_moved_is_found_and_the_cpu_caveat_said_only_on_cpu():
    moves = [{"per_step": 1, "file": "train.py", "line": 20}]
    message = (
        "스텝마다 1번, `device=` 없이 호스트에서 만든 텐서를 장치로 옮깁니다."
        " `torch.rand(..., device=device)`처럼 장치에서 바로 만드세요."
    )
    on_cpu = (
        " (CPU에서는 옮길 곳이 같아 복사가 없지만 GPU에서라면 스텝마다 호스트→장치 복사입니다.)"
    )
    fields = {"file": "train.py", "line": 20, "evidence": {"per_step": 1}}
    item = expected("host-tensor-move", message + on_cpu, **fields)
    assert only("host-tensor-move", evidence(moves=moves)) == item
    assert only("host-tensor-move", cuda(moves=moves))["message"] == message
    assert (
        check("host-tensor-move", evidence()).fine == "스텝마다 호스트에서 만들어 옮기는 텐서 없음"
    )


def test_data_parallel_names_the_first_wrapped_model_once():
    rows = [{"file": "train.py", "line": 30}, {"file": "train.py", "line": 40}]
    message = (
        "`nn.DataParallel`로 감싼 모델을 씁니다. 한 프로세스가 GPU마다 모델을 복제하고 결과를"
        " 모으므로 전역 인터프리터 락(GIL)과 복제 비용에 막힙니다. 분산 데이터 병렬(DDP)로"
        " 바꾸세요."
    )
    assert check("data-parallel", evidence(data_parallel=rows)).findings == [
        expected("data-parallel", message, file="train.py", line=30)
    ]
    assert check("data-parallel", evidence()).fine == "`nn.DataParallel` 없음"
    assert check("data-parallel", evidence(steps_seen=0)).skipped == (
        "옵티마이저 스텝을 보지 못했습니다"
    )


# ----- 계산 -----
FP32_MESSAGE = (
    "fp32 행렬 곱이 연산 시간의 61%를 차지하는데 autocast가 없습니다."
    " `torch.autocast(device_type, dtype=torch.bfloat16)`로 순전파를 감싸 보세요"
    " (CPU에서는 bf16 명령이 있는 CPU에서만 빨라집니다)."
    " 수치가 바뀌는 팁이므로 속도와 함께 손실도 확인해야 합니다."
)
SITES = [{"file": "model.py", "line": 8, "seconds": 0.3}, {"file": "model.py", "line": 9}]


def test_fp32_matmul_share_is_its_share_of_ops_times_the_compute_part_of_the_step():
    ev = evidence(
        data_s=[0.2],
        ops__matmul_s={"fp32": 0.6123456, "low": 0.0, "other": 0},
        ops__matmul_sites=SITES,
    )
    assert only("fp32-matmul", ev) == expected(
        "fp32-matmul",
        FP32_MESSAGE,
        file="model.py",
        line=8,
        share=0.4899,  # 연산의 61% × 배치를 기다리지 않은 80%
        evidence={"fp32_matmul_share_of_ops": 0.6123},
    )


def test_fp32_matmul_without_a_timed_window_or_a_site_still_reports_its_share_of_ops():
    ev = evidence(step_s=None, ops__matmul_s={"fp32": 0.6123456, "low": 0.0, "other": 0})
    item = only("fp32-matmul", ev)
    assert (item["share"], item["file"], item["line"]) == (0.6123, None, None)


def test_fp32_matmul_starts_at_half_the_op_time_and_not_under_autocast():
    at_bound = evidence(ops__matmul_s={"fp32": 0.5, "low": 0.0, "other": 0})
    assert only("fp32-matmul", at_bound)["evidence"] == {"fp32_matmul_share_of_ops": 0.5}
    below = check("fp32-matmul", evidence(ops__matmul_s={"fp32": 0.49, "low": 0.0, "other": 0}))
    assert below.fine == "fp32 행렬 곱이 연산 시간의 49% (기준 50% 미만)" and not below.findings
    autocast = check("fp32-matmul", evidence(ops__matmul_s={"fp32": 0.9, "low": 0.001, "other": 0}))
    assert autocast.fine == "행렬 곱이 이미 16비트(autocast 등)로 돕니다" and not autocast.findings


@pytest.mark.parametrize("ops", [None, {"op_s": 0}])
def test_fp32_matmul_is_skipped_without_an_op_probe_step(ops):
    assert check("fp32-matmul", evidence(ops=ops)).skipped == "연산 탐침 스텝에 이르지 못했습니다"


TF32_MESSAGE = (
    "TF32가 있는 GPU인데 TF32가 꺼져 있고 fp32 행렬 곱이 GPU 시간의 60%입니다."
    ' `torch.set_float32_matmul_precision("high")`로 켜 보세요.'
    " 수치가 바뀌는 팁이므로 속도와 함께 손실도 확인해야 합니다."
)


def tf32_ev(**changes) -> dict:
    return cuda(**{"ops__matmul_s": {"fp32": 0.6, "low": 0.0, "other": 0}} | changes)


def test_tf32_off_reports_its_share_of_the_compute_part_of_the_step_and_the_matmul_line():
    item = only("tf32-off", tf32_ev(data_s=[0.5], ops__matmul_sites=SITES))
    assert item == expected("tf32-off", TF32_MESSAGE, file="model.py", line=8, share=0.3)
    assert only("tf32-off", tf32_ev(step_s=None))["share"] == 0.6


def test_tf32_off_thresholds_gpu_generation_and_flag():
    assert only("tf32-off", tf32_ev(gpu__capability=[8, 0]))["file"] is None
    for gpu in (None, {"name": "V100", "capability": [7, 0]}, {"name": "?"}):
        quiet = check("tf32-off", tf32_ev(gpu=gpu))
        assert quiet.fine == "이 GPU에는 TF32가 없습니다" and not quiet.findings
    on = check("tf32-off", tf32_ev(flags__tf32_matmul=True))
    assert on.fine == "TF32가 켜져 있습니다" and not on.findings
    assert check("tf32-off", tf32_ev(ops__matmul_s={"fp32": 0.3, "low": 0, "other": 0})).findings
    below = check("tf32-off", tf32_ev(ops__matmul_s={"fp32": 0.29, "low": 0, "other": 0}))
    assert below.fine == "fp32 행렬 곱이 GPU 시간의 29%" and not below.findings
    for ops in (None, {"op_s": 0}):
        assert rules.tf32_off(cuda(ops=ops)).skipped == "연산 탐침 스텝에 이르지 못했습니다"


# ----- 옵티마이저와 디버깅 도구 -----
SGD = {
    "class": "SGD",
    "module": "torch.optim.sgd",
    "fused": None,
    "foreach": None,
    "has_fused": True,
    "file": "t.py",
    "line": 5,
}


def test_an_unfused_optimizer_is_found_with_its_path_and_its_share_of_the_step():
    ev = evidence(optimizers=[SGD], optimizer_s=[0.2, 0.3, 0.25], step_s=[0.5, 0.5, 0.5])
    message = (
        "`SGD`의 갱신이 for-loop 기본 경로로 돕니다. 이 옵티마이저에는 모든 매개변수를 커널"
        " 하나로 갱신하는 `fused=True` 경로가 있습니다: `SGD(..., fused=True)`."
        " 옵티마이저 스텝이 학습 스텝의 50%를 차지합니다."
    )
    item = expected("fused-optimizer", message, file="t.py", line=5, share=0.5)
    assert only("fused-optimizer", ev) == item


def test_an_unfused_foreach_optimizer_without_a_timed_share_says_no_share():
    adamw = dict(SGD, **{"class": "AdamW", "module": "torch.optim.adamw", "foreach": True})
    item = only("fused-optimizer", evidence(optimizers=[adamw], optimizer_s=[], step_s=[1.0]))
    assert item["message"] == (
        "`AdamW`의 갱신이 foreach 경로로 돕니다. 이 옵티마이저에는 모든 매개변수를 커널 하나로"
        " 갱신하는 `fused=True` 경로가 있습니다: `AdamW(..., fused=True)`."
    )
    assert item["share"] is None


def test_optimizers_without_a_fused_path_or_already_fused_or_not_torchs_are_passed_over():
    others = [
        dict(SGD, module="apex.optimizers.sgd", line=1),
        dict(SGD, fused=True, line=2),
        dict(SGD, **{"class": "Adam", "has_fused": False, "line": 3}),
    ]
    quiet = check("fused-optimizer", evidence(optimizers=others))
    assert quiet.fine == "옵티마이저(Adam, SGD)가 융합 경로를 쓰거나 융합 경로가 없습니다"
    assert not quiet.findings
    mixed = check(
        "fused-optimizer", evidence(optimizers=[*others, SGD, dict(SGD), dict(SGD, line=9)])
    )
    assert [item["line"] for item in mixed.findings] == [5, 9]
    skipped = check("fused-optimizer", evidence(optimizers=None))
    assert skipped.skipped == "옵티마이저 스텝을 보지 못했습니다"


def test_debug_tools_are_each_found_at_the_line_that_turned_them_on():
    debug = {"anomaly_steps": 3, "profiler_steps": 4, "profiler_at": ["train.py", 50]}
    items = check("debug-tools", evidence(debug=debug)).findings
    assert items == [
        expected(
            "debug-tools",
            "학습 스텝 3개에서 이상 탐지(`detect_anomaly`)가 켜져 있었습니다. 스텝마다 비용을"
            " 더합니다. 문제를 찾은 뒤에는 끄세요.",
            evidence={"steps": 3, "tool": "anomaly"},
        ),
        expected(
            "debug-tools",
            "학습 스텝 4개에서 프로파일러가 켜져 있었습니다. 스텝마다 비용을 더합니다. 필요한 몇"
            " 스텝만 `schedule`로 기록하세요.",
            file="train.py",
            line=50,
            evidence={"steps": 4, "tool": "profiler"},
        ),
    ]
    (profiler,) = check("debug-tools", evidence(debug={"profiler_steps": 4})).findings
    assert profiler["evidence"] == {"steps": 4, "tool": "profiler"}


def test_debug_tools_off_or_no_optimizer_step():
    for debug in ({}, None):
        assert check("debug-tools", evidence(debug=debug)).fine == (
            "이상 탐지와 프로파일러가 꺼져 있습니다"
        )
    assert check("debug-tools", evidence(steps_seen=0, debug={"anomaly_steps": 3})).skipped == (
        "옵티마이저 스텝을 보지 못했습니다"
    )


def test_an_eval_forward_with_autograd_on_is_counted_at_its_line():
    rows_seen = {"count": 5, "file": "train.py", "line": 60}
    rows = [rows_seen]
    message = (
        "`model.eval()`인 모델의 순전파를 변화도 기록을 켠 채로 5번 돌렸고 뒤에 옵티마이저 스텝이"
        " 없었습니다. 평가는 `torch.inference_mode()`(또는 `torch.no_grad()`) 안에서 돌리세요."
    )
    item = expected("eval-autograd", message, file="train.py", line=60, evidence={"forwards": 5})
    assert only("eval-autograd", evidence(eval_autograd=rows)) == item
    for rows in ([], None):
        assert check("eval-autograd", evidence(eval_autograd=rows)).fine == (
            "변화도 기록을 켠 채 도는 평가 순전파 없음"
        )
    # 옵티마이저 스텝 전에 멈춘 작업: 괜찮다고 하지 않고 보지 못했다고 합니다.
    assert check("eval-autograd", evidence(steps_seen=0, eval_autograd=[])).skipped == (
        "옵티마이저 스텝을 보지 못했습니다"
    )
    # 옵티마이저가 없는 평가만 하는 스크립트도 찾은 것은 그대로 보고합니다.
    assert only("eval-autograd", evidence(steps_seen=0, eval_autograd=[rows_seen])) == item


def test_hand_written_attention_is_found_at_its_line_with_its_count():
    rows = [{"per_step": 2, "file": "model.py", "line": 33}]
    message = (
        "행렬 곱 → softmax → 행렬 곱으로 손으로 쓴 어텐션을 스텝마다 2번 부릅니다."
        " `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=...)` 한 줄로"
        " 바꾸면 점수 행렬을 메모리에 만들지 않는 커널을 씁니다."
    )
    assert only("attention", evidence(attention=rows)) == expected(
        "attention", message, file="model.py", line=33
    )
    assert check("attention", evidence()).fine == (
        "행렬 곱 → softmax → 행렬 곱으로 이어지는 어텐션 없음"
    )


# ----- CUDA에서만: 짧은 커널, cudnn.benchmark, channels_last -----
LAUNCH = {"ops__ops": 900, "ops__median_op_s": 5e-6, "ops__op_s": 0.002, "op_step_s": 0.01}


def launch(**changes) -> rules.Check:
    return check("launch-bound", cuda(**LAUNCH | changes))


def test_a_launch_bound_step_is_reported_with_its_op_count_median_and_idle_share():
    message = (
        "스텝당 연산이 900개이고 하나의 GPU 시간 중앙값이 5 µs라, GPU가 스텝의 20%만 일합니다."
        " 커널을 띄우는 호스트가 병목입니다: `torch.compile`로 커널을 합치거나"
        " CUDA 그래프(cuda-graphs 페이지)를 쓰세요."
    )
    (item,) = launch().findings
    assert item == expected("launch-bound", message, share=0.8)


def test_launch_bound_needs_more_than_200_ops_under_20_us_and_a_gpu_busy_under_half():
    assert launch(ops__ops=201).findings
    assert launch(ops__ops=200).fine == "연산 200개, GPU가 일한 몫 20%"
    assert launch(ops__median_op_s=19e-6).findings
    assert launch(ops__median_op_s=20e-6).fine == "연산 900개, GPU가 일한 몫 20%"
    assert launch(ops__op_s=0.0049).findings
    assert launch(ops__op_s=0.005).fine == "연산 900개, GPU가 일한 몫 50%"
    # 탐침 스텝의 시간보다 연산 시간의 합이 크면(겹친 스트림) 몫을 100%에서 자릅니다.
    assert launch(ops__op_s=0.015).fine == "연산 900개, GPU가 일한 몫 100%"


def test_launch_bound_is_skipped_without_op_timings():
    why = "연산 탐침 스텝에 이르지 못했습니다"
    for changes in ({"ops": None}, {"op_step_s": None}, {"op_step_s": 0}):
        assert launch(**changes).skipped == why
    assert launch(ops__median_op_s=None).skipped == why


CONV = {"count": 12, "nchw": 12, "shapes": 1}


def test_cudnn_benchmark_off_with_one_conv_shape_is_reported():
    message = (
        "합성곱 12번의 입력 모양이 같은데 `torch.backends.cudnn.benchmark`가 꺼져 있습니다."
        " 모양이 바뀌지 않는 학습이면 `torch.backends.cudnn.benchmark = True`로 첫 스텝에"
        " 가장 빠른 알고리즘을 고르게 하세요."
    )
    assert only("cudnn-benchmark", cuda(ops__conv=CONV)) == expected("cudnn-benchmark", message)


def test_cudnn_benchmark_is_quiet_with_no_conv_the_flag_on_or_changing_shapes():
    def fine(**changes):
        result = check("cudnn-benchmark", cuda(ops__conv=dict(CONV), **changes))
        assert not result.findings
        return result.fine

    assert fine(ops__conv__count=0) == "합성곱 없음"
    assert fine(flags__cudnn_benchmark=True) == "`cudnn.benchmark`가 켜져 있습니다"
    assert fine(ops__conv__shapes=2) == (
        "합성곱 입력 모양이 스텝 안에서 바뀝니다(benchmark가 매번 다시 고릅니다)"
    )


def test_channels_last_is_asked_for_only_when_every_conv_input_is_nchw():
    message = (
        "4차원 합성곱 입력 12개가 모두 NCHW(contiguous)입니다."
        " `model.to(memory_format=torch.channels_last)`와 입력의 `.to(memory_format=...)`로"
        " 텐서 코어가 좋아하는 NHWC 배치를 써 보세요(특히 16비트에서)."
    )
    assert only("channels-last", cuda(ops__conv=CONV)) == expected("channels-last", message)
    one_nhwc = check("channels-last", cuda(ops__conv=dict(CONV, nchw=11)))
    assert one_nhwc.fine == "합성곱 입력이 이미 channels_last입니다" and not one_nhwc.findings
    assert check("channels-last", cuda(ops__conv=dict(CONV, count=0))).fine == "합성곱 없음"


@pytest.mark.parametrize(
    "function", [rules.tf32_off, rules.launch_bound, rules.cudnn_benchmark, rules.channels_last]
)
def test_each_cuda_rule_itself_skips_a_cpu_job_and_a_job_without_op_probes(function):
    assert function(evidence(ops__conv=CONV)).skipped == "CUDA에서만 봅니다"
    assert function(cuda(ops=None)).skipped == "연산 탐침 스텝에 이르지 못했습니다"


# ----- 모든 규칙 -----
def test_evaluate_runs_every_rule_and_skips_only_the_cuda_rules_on_a_cpu():
    checks = rules.evaluate(evidence(ops__conv=CONV))
    assert set(checks) == set(catalog.BY_KEY)
    for rule in catalog.RULES:
        assert (checks[rule.key].skipped == "CUDA에서만 봅니다") is rule.cuda_only, rule.key
    on_gpu = rules.evaluate(cuda(ops__conv=CONV))
    assert set(on_gpu) == set(catalog.BY_KEY)
    assert [i["rule"] for i in on_gpu["channels-last"].findings] == ["channels-last"]
