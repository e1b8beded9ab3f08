"""더 나아가기 벤치마크: autograd를 켠 평가 vs no_grad vs inference_mode, 디버깅 도구의 비용.

1. eval: 같은 평가 루프를 autograd를 켠 채(기준), no_grad, inference_mode로 잽니다. 역전파용으로
   저장된 활성값의 크기(saved_activation_mib)를 같은 실행에서 셉니다. autograd를 켠 채 손실을
   텐서로 더하면 평가가 끝날 때까지 모든 배치의 그래프가 살아 있으므로, 이 값만큼 메모리를
   차지합니다.
   최대 메모리 증가(peak_memory_mib)는 모든 변형에서 잽니다. 천장은 없습니다.
2. debug: 같은 학습 스텝을 아무것도 켜지 않고(기준), 이상 탐지를 켜고, 프로파일러를 켜고 잽니다.
   프로파일러는 끝날 때 기록을 정리하는 시간까지 들어갑니다.
"""

import pytest
import torch

from snippets import beyond_checkpointing as ck
from snippets import beyond_eval_no_autograd as ev

PAGE = "no-autograd-eval"

# 평가: 큰 배치로 계산이 대부분인 경우. 디버그: 작은 연산이 많은 학습(연산마다 드는 비용이 드러남).
SIZES = {
    "quick": {
        "eval": {"batches": 2, "batch_size": 4, "features": 8, "hidden": 16, "layers": 2},
        "debug": {"batches": 2, "batch_size": 4, "features": 8, "hidden": 16, "layers": 2},
    },
    "cpu": {
        "eval": {"batches": 8, "batch_size": 256, "features": 256, "hidden": 512, "layers": 4},
        "debug": {"batches": 8, "batch_size": 32, "features": 64, "hidden": 128, "layers": 8},
    },
    "cuda": {
        "eval": {"batches": 16, "batch_size": 1024, "features": 1024, "hidden": 4096, "layers": 4},
        "debug": {"batches": 8, "batch_size": 64, "features": 256, "hidden": 512, "layers": 8},
    },
}

EVAL_VARIANTS = {
    "autograd-on": (ev.evaluate_with_autograd, "baseline"),
    "no-grad": (ev.evaluate_no_grad, "other"),
    "inference-mode": (ev.evaluate, "recommended"),
}
DEBUG_VARIANTS = {
    "debug-off": (ev.train_steps, "baseline"),
    "anomaly-detection": (ev.train_steps_with_anomaly_detection, "other"),
    "profiler-on": (ev.train_steps_with_profiler, "other"),
}


def setup(config, device):
    model = ev.make_model(config["features"], config["hidden"], config["layers"]).to(device)
    batches = ev.make_inputs(config["batches"], config["batch_size"], config["features"])
    return model, [(x.to(device), y.to(device)) for x, y in batches]


def saved_activation_mib(fn, model, batches):
    """평가가 역전파용으로 저장한 활성값(MiB). 셈은 활성화 체크포인팅 페이지의 함수로 합니다."""
    return ck.saved_activation_bytes(model, lambda: fn(model, batches)) / 2**20


@pytest.mark.measures("eval")
def test_eval(compare, bench_device, size_key):
    config = SIZES[size_key]["eval"]
    params = {"batch_size": config["batch_size"], "batches": config["batches"]}
    group = compare("eval", params=params,
                    per_call={"samples": config["batches"] * config["batch_size"]})  # fmt: skip
    for variant, (fn, role) in EVAL_VARIANTS.items():
        model, batches = setup(config, bench_device)
        saved = saved_activation_mib(fn, model, batches)
        group.add(variant, fn, model, batches, role=role, metrics={"saved_activation_mib": saved})
    for loss, _accuracy in group.run().values():
        assert torch.isfinite(loss)


@pytest.mark.measures("debug")
def test_debug_tools(compare, bench_device, size_key):
    config = SIZES[size_key]["debug"]
    group = compare("debug", params={"steps": config["batches"], "layers": config["layers"]},
                    per_call={"steps": config["batches"]})  # fmt: skip
    for variant, (fn, role) in DEBUG_VARIANTS.items():
        model, batches = setup(config, bench_device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
        group.add(variant, fn, model, optimizer, batches, role=role)
    for loss in group.run().values():
        assert torch.isfinite(loss)
