"""테스트용 결과 문서입니다. 숫자는 일부러 흔하지 않은 값으로 골라, 빌드한 HTML에서 찾을 때 다른
곳의 숫자와 헷갈리지 않게 했습니다. 측정값이 아니라 형식과 렌더링을 시험하는 값입니다."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from benchmarks.results_file import SCHEMA_VERSION, snippet_sha256

TIP3 = "snippets/tip3_avoid_syncs.py"
TIP4 = "snippets/tip4_create_on_device.py"

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


def entry(tip, key, group, variant, role, median, iqr, snippet, root, **fields):
    return {
        "id": f"{tip}.{key}",
        "tip": tip,
        "key": key,
        "group": group,
        "variant": variant,
        "role": role,
        "median_s": median,
        "iqr_s": iqr,
        "rounds": 17,
        "iterations": 3,
        "metrics": {},
        "ceiling": None,
        "snippet": snippet,
        "snippet_sha256": snippet_sha256(root / snippet),
        **fields,
    }


def sample_document(root: Path) -> dict:
    """팁 3, 4는 측정, 나머지 팁은 "재지 않음"인 GPU 결과 문서입니다."""
    tip4 = [
        entry("tip4", "rand-copy", "torch.rand", "rand_then_copy", "baseline", 0.00737, 0.00011,
              TIP4, root, metrics={"gb_per_s": 36.4}),
        entry("tip4", "rand-on-device", "torch.rand", "rand_on_device", "fast", 0.00268, 0.00004,
              TIP4, root, metrics={"gb_per_s": 98.7}, ceiling="tip4.device-copy"),
        entry("tip4", "device-copy", "천장", "장치 안 복사", "ceiling", 0.00161, 0.00002,
              TIP4, root, metrics={"gb_per_s": 3210.0}),
    ]  # fmt: skip
    tip3 = [
        entry("tip3", "item", "학습 루프", "train_reading_every_step", "baseline", 0.0913, 0.0021,
              TIP3, root, metrics={"steps_per_s": 219.0, "syncs_per_step": 1.0}),
        entry("tip3", "rarely", "학습 루프", "train_reading_rarely", "fast", 0.0571, 0.0013,
              TIP3, root, metrics={"steps_per_s": 350.0}, ceiling="tip3.no-read"),
        entry("tip3", "no-read", "학습 루프", "train_without_reading", "ceiling", 0.0555, 0.0012,
              TIP3, root, metrics={"steps_per_s": 360.0}),
    ]  # fmt: skip
    reasons = {
        "tip1": "테스트용 문서라서 재지 않았습니다.",
        "tip2": "테스트용 문서라서 재지 않았습니다.",
        "tip5": "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유).",
        "tip6": "테스트용 문서라서 재지 않았습니다.",
        "tip7": "테스트용 문서라서 재지 않았습니다.",
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": False,
        "environment": copy.deepcopy(ENVIRONMENT),
        "benchmarks": tip4 + tip3,
        "not_measured": [
            {"tip": tip, "key": "test_x", "reason": reason} for tip, reason in reasons.items()
        ],
    }


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return path
