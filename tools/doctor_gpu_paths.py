"""GPU 점검: torchdoctor의 CUDA 경로(torchdoctor/gpu.py)를 작은 작업 하나로 모두 돌리고
JSON을 씁니다.

  python tools/doctor_gpu_paths.py 결과.json

경로마다: 이벤트로 잰 스텝·데이터 시간, set_sync_debug_mode("warn")로 잡은 동기화의 줄,
프로파일러 한 스텝의 고정되지 않은 호스트→장치 복사, GPU가 쉰 몫, 커널 크기 분포.
작업에는 일부러 `.item()`(동기화)과 고정되지 않은 배치 복사를 넣었습니다.
tools/gpu_check.sh가 부릅니다.
"""

import json
import sys

import torch

from torchdoctor import gpu


def tiny_job():
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [torch.randn(32, 64) for _ in range(8)]  # 고정되지 않은 호스트 메모리
    return model, optimizer, batches


def one_step(model, optimizer, batch):
    x = batch.cuda()  # 고정되지 않은 메모리에서 복사합니다
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()  # 동기화하는 호출(잡혀야 합니다)


def main(path: str) -> None:
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
    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
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
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, ensure_ascii=False, indent=2)
    failed = [name for name, ok in result["checks"].items() if not ok]
    if failed:
        sys.exit(f"torchdoctor GPU 경로 점검 실패: {', '.join(failed)} ({path})")


if __name__ == "__main__":
    main(sys.argv[1])
