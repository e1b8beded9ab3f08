"""GPU 점검: torchdoctor의 CUDA 경로를 작은 작업 하나로 모두 돌리고 JSON을 씁니다.

  python tools/doctor_gpu_paths.py 결과.json

두 부분입니다.
1. torchdoctor/gpu.py의 함수를 따로: 이벤트로 잰 스텝·데이터 시간,
   set_sync_debug_mode("warn")로 잡은 동기화의 줄, 프로파일러 한 스텝의 고정되지 않은
   호스트→장치 복사, GPU가 쉰 몫, 커널 크기 분포.
2. 진단기 전체(`torchdoctor.watch()`)를 같은 작업의 DataLoader 루프에: 증거에 시간 창을 CUDA
   이벤트로 잰 gpu_step_s, 심어 둔 `.item()`의 줄이 있는 cuda_syncs, 고정되지 않은 복사가 있는
   profile이 있는지 봅니다.
작업에는 일부러 `.item()`(동기화)과 고정되지 않은 배치 복사를 넣었습니다.
tools/gpu_check.sh가 부릅니다. 이 파일의 점검(doctor_checks)은 tests/test_doctor_gpu.py가
합성한 증거로 CPU에서 시험하지만, GPU에서 돌렸다는 뜻은 아닙니다.
"""

import json
import os
import sys

import torch

import torchdoctor
from torchdoctor import gpu

WATCH = {"skip_steps": 2, "steps": 5, "probe_steps": 2, "measure_fixes": False}
BATCHES = 16  # 워밍업 2 + 호출 탐침 2 + 연산 1 + 프로파일러 1 + 시간 창 5보다 넉넉히


def tiny_job(device: str = "cuda"):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [torch.randn(32, 64) for _ in range(8)]  # 고정되지 않은 호스트 메모리
    return model, optimizer, batches


def one_step(model, optimizer, batch, device: str = "cuda"):
    x = batch.to(device)  # 고정되지 않은 메모리에서 복사합니다
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()  # PLANT: 동기화하는 호출(잡혀야 합니다)


def planted_line() -> int:
    """one_step의 `.item()` 줄(진단기의 cuda_syncs가 가리켜야 할 곳)."""
    with open(__file__, encoding="utf-8") as handle:
        marker = "# " + "PLANT:"  # 이 줄 자신과 맞지 않게 나눠 씁니다
        return next(n for n, text in enumerate(handle, 1) if marker in text)


def watch_job(device: str = "cuda", **options) -> dict:
    """진단기 전체를 작은 DataLoader 루프에: 증거(JSON으로 쓸 수 있는 dict)를 돌려줍니다."""
    model, optimizer, _ = tiny_job(device)
    data = torch.utils.data.TensorDataset(torch.randn(BATCHES * 32, 64))
    loader = torch.utils.data.DataLoader(data, batch_size=32)  # pin_memory 없음
    with torchdoctor.watch(**(WATCH | options)) as doctor:
        for (batch,) in loader:
            one_step(model, optimizer, batch, device)
    report = doctor.report()
    return {
        "evidence": doctor.evidence(),
        "findings": [(item["rule"], item["line"]) for item in report.findings],
    }


def same_file(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def doctor_checks(ev: dict, item_line: int, steps: int = WATCH["steps"]) -> dict[str, bool]:
    """진단기의 증거에 CUDA 경로 셋이 다 있는지(규칙이 읽는 그 키들)."""
    step_s, data_s = ev.get("gpu_step_s") or [], ev.get("gpu_data_s") or []
    syncs = ev.get("cuda_syncs") or []
    pageable = (ev.get("profile") or {}).get("pageable_htod") or {}
    return {
        "doctor_gpu_step_s": len(step_s) == steps and all(s > 0 for s in step_s),
        "doctor_gpu_data_s": len(data_s) == steps and all(s >= 0 for s in data_s),
        "doctor_item_sync": any(
            row["line"] == item_line and same_file(row["file"], __file__) and row["per_step"] >= 1
            for row in syncs
        ),
        "doctor_pageable": pageable.get("count", 0) >= 1,
        "doctor_no_errors": not ev.get("errors"),
    }


def gpu_paths() -> dict:
    """torchdoctor/gpu.py의 함수를 진단기 없이 따로 돌립니다."""
    model, optimizer, batches = tiny_job()
    for batch in batches[:3]:
        one_step(model, optimizer, batch)  # 워밍업
    events = gpu.StepEvents()
    events.boundary()
    for batch in batches:
        with events.fetch():
            batch = batch.clone()
        one_step(model, optimizer, batch)
        events.boundary()
    step_s, data_s = events.read()
    with gpu.sync_warnings_caught() as caught:
        for batch in batches[:2]:
            one_step(model, optimizer, batch)
    sync = gpu.sync_sites(caught, steps=2)
    profiled = gpu.collect_profile(lambda: one_step(model, optimizer, batches[0]))
    return {
        "step_s": step_s,
        "data_s": data_s,
        "sync_sites": sync,
        "profile": profiled,
        "checks": {
            "events": len(step_s) == len(batches) and all(s > 0 for s in step_s),
            "sync_found": any(row["per_step"] >= 1 for row in sync),
            "pageable_found": profiled["pageable_htod"]["count"] >= 1,
            "kernels_found": profiled["kernels"]["count"] > 0,
            "idle_share": profiled["idle_share"] is not None,
        },
    }


def main(path: str) -> None:
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    result |= gpu_paths()
    result["doctor"] = watch_job("cuda")
    result["checks"] |= doctor_checks(result["doctor"]["evidence"], planted_line())
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, ensure_ascii=False, indent=2, default=str)
    failed = [name for name, ok in result["checks"].items() if not ok]
    if failed:
        sys.exit(f"torchdoctor GPU 경로 점검 실패: {', '.join(failed)} ({path})")


if __name__ == "__main__":
    main(sys.argv[1])
