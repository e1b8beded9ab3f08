"""테스트용 결과 문서입니다. 숫자는 일부러 흔하지 않은 값으로 골라, 빌드한 HTML에서 찾을 때 다른
곳의 숫자와 헷갈리지 않게 했습니다. 측정값이 아니라 형식과 렌더링을 시험하는 값입니다."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from benchmarks.results_file import SCHEMA_VERSION, fingerprint
from guide import registry

ENVIRONMENT = {
    "device_kind": "cuda",
    "device_name": "Test GPU 9000",
    "device_count": 1,
    "driver": "999.12.34",
    "torch": "2.99.0+cu999",
    "cuda": "99.9",
    "cudnn": "99901",
    "lightning": "9.9.9",
    "python": "3.99.1",
    "platform": "Linux-test",
    "cpu_model": "Test CPU",
    "cpu_flags": ["avx2", "avx512f"],
    "cpu_cores": 16,
    "usable_cores": 16,
    "torch_threads": 16,
    "torch_interop_threads": 16,
    "tf32_matmul": False,
    "tf32_cudnn": True,
    "float32_matmul_precision": "highest",
    "date": "2031-04-05T06:07:08Z",
    "commit": "abcdef0123" + "4" * 30,
    "dirty": False,
    "pytest_benchmark": "5.3.1",
}
SAMPLE_NAME = "test-gpu-9000.json"
CPU_NAME = "cpu-test-4cores.json"


def entry(page_id, key, group, variant, role, median, iqr, root, modules=None, **fields):
    """결과 항목 하나. modules=(스니펫, 벤치마크)를 주지 않으면 레지스트리에서 찾습니다."""
    if modules is None:
        page = registry.by_id(page_id)
        modules = (page.snippet, page.benchmark)
    snippet = f"snippets/{modules[0]}.py"
    bench = f"benchmarks/{modules[1]}.py"
    return {
        "id": f"{page_id}.{key}",
        "page": page_id,
        "key": key,
        "group": group,
        "variant": variant,
        "role": role,
        "computed": False,
        "median_s": median,
        "iqr_s": iqr,
        "rounds": 17,
        "iterations": 3,
        "params": {},
        "metrics": {},
        "ceiling": None,
        "snippet": snippet,
        "benchmark": bench,
        "fingerprint": fingerprint(root / snippet, root / bench),
        **fields,
    }


def sample_document(root: Path) -> dict:
    """팁 3, 4는 측정, 나머지 팁은 "재지 않음"인 GPU 결과 문서입니다."""
    tip4 = [
        entry("tip4", "rand-copy", "rand", "create-then-copy", "baseline", 0.00737, 0.00011,
              root, params={"mib": 64}, metrics={"gb_per_s": 36.4}),
        entry("tip4", "rand-on-device", "rand", "create-on-device", "recommended", 0.00268,
              0.00004, root, params={"mib": 64}, metrics={"gb_per_s": 98.7},
              ceiling="tip4.device-copy"),
        entry("tip4", "device-copy", "ceiling", "device-copy", "ceiling", 0.00161, 0.00002,
              root, metrics={"gb_per_s": 3210.0}),
    ]  # fmt: skip
    tip3 = [
        entry("tip3", "item", "loop", "item-every-step", "baseline", 0.0913, 0.0021, root,
              params={"steps": 20, "batch_size": 64},
              metrics={"steps_per_s": 219.0, "syncs_per_step": 1.0}),
        entry("tip3", "rarely", "loop", "read-once", "recommended", 0.0571, 0.0013, root,
              params={"steps": 20, "batch_size": 64}, metrics={"steps_per_s": 350.0},
              ceiling="tip3.no-read"),
        entry("tip3", "no-read", "loop", "never-read", "ceiling", 0.0555, 0.0012, root,
              params={"steps": 20, "batch_size": 64}, metrics={"steps_per_s": 360.0}),
    ]  # fmt: skip
    reasons = {
        "tip1": ("throughput", "테스트용 문서라서 재지 않았습니다."),
        "tip2": ("batch-copy", "테스트용 문서라서 재지 않았습니다."),
        "tip5": ("dp-vs-ddp", "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)."),
        "tip6": ("step", "테스트용 문서라서 재지 않았습니다."),
        "tip7": ("bottleneck", "테스트용 문서라서 재지 않았습니다."),
    }
    # 나머지 페이지(더 나아가기, 전부 합치면)도 "재지 않음"으로 채워 빌드가 경고하지 않게 합니다.
    for page in registry.load():
        if page.id not in reasons and page.id not in ("tip3", "tip4"):
            reasons[page.id] = (next(iter(page.groups)), "테스트용 문서라서 재지 않았습니다.")
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": False,
        "environment": copy.deepcopy(ENVIRONMENT),
        "benchmarks": tip4 + tip3,
        "not_measured": [
            {"page": page, "group": group, "reason": reason}
            for page, (group, reason) in reasons.items()
        ],
    }


def cpu_document(root: Path) -> dict:
    """두 번째 장치: 팁 4만 잰 4코어 CPU입니다(두 방식이 같아 측정 오차 범위 안인 결과)."""
    doc = sample_document(root)
    doc["environment"].update(device_kind="cpu", device_name="Test CPU", device_count=0,
                              usable_cores=4, driver=None, cuda=None, cudnn=None)  # fmt: skip
    doc["benchmarks"] = doc["benchmarks"][:3]
    doc["benchmarks"][0].update(median_s=0.0421, iqr_s=0.0009)
    doc["benchmarks"][1].update(median_s=0.0417, iqr_s=0.0008)
    doc["not_measured"] = [{"page": "tip3", "group": "loop", "reason": "테스트용 CPU 문서입니다."}]
    return doc


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return path
