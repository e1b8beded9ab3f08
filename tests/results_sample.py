"""테스트용 결과 문서(스키마 3)와 그것을 검사하는 도구입니다. 숫자는 일부러 흔하지 않은 값으로
골라, 빌드한 HTML에서 찾을 때 다른 곳의 숫자와 헷갈리지 않게 했습니다. 측정값이 아니라 형식과
렌더링을 시험하는 값입니다.

- sample_document: GPU 한 대. 팁 4와 팁 3은 잰 결과, 팁 5는 "재지 않음"과 이유, 나머지는 없음.
- cpu_document: 4코어 CPU. 팁 4는 차이 없음, 전부 합치면은 CUDA에만 있는 단계가 느려 보이는 폭포.
- full_document: 레지스트리의 모든 페이지·묶음·변형을 채운 합성 문서(결론 문장을 빠짐없이 훑을 때).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

from guide import registry
from results_format import results_file
from results_format.schema import SCHEMA_VERSION, TEXT_PARAMS

GPU_DEVICE = {
    "kind": "cuda",
    "name": "Test GPU 9000",
    "count": 1,
    "power_limit_w": 700.0,
    "cpu_model": "Test CPU",
    "cpu_flags": ["avx2", "avx512f"],
    "cpu_cores": 16,
    "usable_cores": 16,
    "torch": "2.99.0+cu999",
    "cuda": "99.9",
}
CPU_DEVICE = GPU_DEVICE | {
    "kind": "cpu",
    "name": "Test CPU",
    "count": 0,
    "power_limit_w": None,
    "usable_cores": 4,
    "cuda": None,
}
SAMPLE_NAME = "test-gpu-9000-700w-1gpu.json"
CPU_NAME = "cpu-test-4cores-avx2-avx512f.json"
COMMIT = "abcdef0123" + "4" * 30
DATE = "2031-04-05T06:07:08Z"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def measured(page_id: str, root: Path, *, modules: tuple[str, str] | None = None, **changes):
    """페이지 하나를 잰 조건. 지문은 root 아래의 스니펫과 벤치마크(레지스트리가 정한 이름)에서
    냅니다."""
    if modules is None:
        page = registry.by_id(page_id)
        modules = (page.snippet, page.benchmark)
    return {
        "date": DATE,
        "commit": COMMIT,
        "dirty": False,
        "snippet_sha256": sha256(root / "snippets" / f"{modules[0]}.py"),
        "benchmark_sha256": sha256(root / "benchmarks" / f"{modules[1]}.py"),
        "driver": "999.12.34",
        "cudnn": "99901",
        "lightning": "9.9.9",
        "python": "3.99.1",
        "platform": "Linux-test",
        "torch_threads": 16,
        "torch_interop_threads": 16,
        "gomp_spincount": "1000",
        "tf32_matmul": False,
        "tf32_cudnn": True,
        "float32_matmul_precision": "highest",
        "pytest_benchmark": "5.3.1",
        "seed": 12345,
    } | changes


def ratio(median: float, low: float, high: float, confidence: float = 0.961) -> dict:
    return {"median": median, "low": low, "high": high, "confidence": confidence}


def entry(key, group, variant, role, median_s, *, ratio=None, params=None, metrics=None,
          ceiling=None, iqr_s=None, rounds=17, iterations=3, **extra) -> dict:  # fmt: skip
    """잰 항목 하나. median_s=None이면 계산한 천장(라운드 0)입니다."""
    computed = median_s is None
    return {
        "key": key,
        "group": group,
        "variant": variant,
        "role": role,
        "computed": computed,
        "median_s": median_s,
        "iqr_s": None if computed else (iqr_s if iqr_s is not None else median_s / 50),
        "rounds": 0 if computed else rounds,
        "iterations": 0 if computed else iterations,
        "params": dict(params or {}),
        "metrics": dict(metrics or {}),
        "ceiling": ceiling,
        "ratio": ratio,
        **extra,
    }


def section(page_id, root, benchmarks, *, not_measured=(), sweeps=None, modules=None, **changes):
    """페이지 하나의 부분. 묶음 기록(시드, 라운드 수, 폭)은 항목의 묶음마다 채웁니다."""
    groups = {
        group: {"seed": 4242, "rounds": 17, "seconds": 3.5, "width": 0.021, "target": 0.05}
        for group in dict.fromkeys(e["group"] for e in benchmarks if not e["computed"])
    }
    return {
        "measured": measured(page_id, root, modules=modules, **changes),
        "groups": groups,
        "benchmarks": benchmarks,
        "not_measured": [{"group": g, "reason": r} for g, r in not_measured],
        "sweeps": sweeps or {},
    }


def document(device: dict, pages: dict, dry_run: bool = False) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "device": copy.deepcopy(device),
        "pages": pages,
    }


def tip4_section(root, baseline_s=0.00737, fast_s=0.00268, fast_ratio=None):
    mib = {"mib": 64}
    fast_ratio = fast_ratio or ratio(2.75, 2.70, 2.81)
    return section("tip4", root, [
        entry("rand-create-then-copy", "rand", "create-then-copy", "baseline", baseline_s,
              iqr_s=0.00011, params=mib, metrics={"gb_per_s": 36.4}),
        entry("rand-create-on-device", "rand", "create-on-device", "recommended", fast_s,
              iqr_s=0.00004, params=mib, metrics={"gb_per_s": 98.7}, ceiling="device-copy",
              ratio=fast_ratio),
        entry("device-copy", "ceiling", "device-copy", "ceiling", 0.00161, iqr_s=0.00002,
              metrics={"gb_per_s": 3210.0}),
    ])  # fmt: skip


def tip3_section(root):
    loop = {"steps": 20, "batch_size": 64}
    return section("tip3", root, [
        entry("item-every-step", "loop", "item-every-step", "baseline", 0.0913, params=loop,
              metrics={"steps_per_s": 219.0, "syncs_per_step": 1.0}, ceiling="never-read"),
        entry("read-once", "loop", "read-once", "recommended", 0.0571, params=loop,
              metrics={"steps_per_s": 350.0}, ceiling="never-read",
              ratio=ratio(1.60, 1.55, 1.66)),
        entry("never-read", "loop", "never-read", "ceiling", 0.0555, params=loop,
              metrics={"steps_per_s": 360.0}),
    ])  # fmt: skip


def sample_document(root: Path) -> dict:
    """GPU 한 대: 팁 4와 팁 3은 잰 결과, 팁 5는 "재지 않음"과 이유. 나머지 페이지는 없습니다."""
    tip5 = section("tip5", root, [], not_measured=[
        ("dp-vs-ddp", "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)."),
    ])  # fmt: skip
    pages = {"tip3": tip3_section(root), "tip4": tip4_section(root), "tip5": tip5}
    return document(GPU_DEVICE, pages)


# 전부 합치면의 단계(변형, 토큰/초, 앞 단계 대비 비율). TF32는 CPU에 메커니즘이 없는데도 구간
# 전체가 0.95 아래로 나온 경우입니다: 느려짐이 아니라 "이 장치에서는 바뀌는 것 없음"이어야 합니다.
CAPSTONE_STAGES = [
    ("baseline", 1000.0, None),
    ("workers", 1031.0, (1.03, 1.01, 1.04)),
    ("create-on-device", 1020.0, (0.99, 0.97, 1.02)),
    ("tf32", 847.0, (0.83, 0.80, 0.86)),
    ("bf16", 1313.0, (1.55, 1.50, 1.61)),
    ("sdpa", 1103.0, (0.84, 0.82, 0.87)),
]
CAPSTONE_PARAMS = {"n_layer": 2, "n_embd": 64, "seq_len": 32, "vocab_size": 257, "steps": 4}


def capstone_section(root):
    rows = []
    first = CAPSTONE_STAGES[0][1]
    for variant, tokens, previous in CAPSTONE_STAGES:
        seconds = CAPSTONE_PARAMS["steps"] * 256 / tokens
        extra = {}
        if previous:
            extra["versus_previous"] = ratio(*previous)
        speed = tokens / first
        params = CAPSTONE_PARAMS | ({"num_workers": 2} if variant == "workers" else {})
        rows.append(entry(
            variant, "waterfall", variant, "baseline" if variant == "baseline" else "other",
            round(seconds, 6), params=params, metrics={"tokens_per_s": tokens},
            ratio=None if variant == "baseline" else ratio(speed, speed * 0.97, speed * 1.03),
            **extra,
        ))  # fmt: skip
    return section("capstone", root, rows)


def tip6_sweep_section(root):
    """팁 6: 묶음은 재지 않고 폭 스윕만. 폭 256–1024 사이에서 bf16이 fp32보다 빨라집니다."""
    made = section(
        "tip6",
        root,
        [],
        not_measured=[
            ("step", "스윕만 잰 테스트용 문서입니다."),
            ("ceiling", "스윕만 잰 테스트용 문서입니다."),
        ],
    )
    made["sweeps"] = {"width": _sweep(made["measured"], "faster")}
    for point in made["sweeps"]["width"]["points"]:
        point["params"] = {"layers": 2, "batch_size": 8, "seq_len": 64}
    return made  # fmt: skip


def fused_section(root):
    """융합 옵티마이저: 묶음 하나만 재고 스윕(텐서 크기, 텐서 수)은 아직 재지 않았습니다."""
    size = {"tensors": 40, "numel": 4096}
    return section("fused-optimizers", root, [
        entry("for-loop", "step", "for-loop", "baseline", 0.0123, params=size),
        entry("fused", "step", "fused", "recommended", 0.0102, params=size,
              ratio=ratio(1.21, 1.16, 1.26)),
    ], not_measured=[("ceiling", "테스트용 문서라서 재지 않았습니다.")])  # fmt: skip


def cpu_document(root: Path) -> dict:
    """두 번째 장치(4코어 CPU): 팁 4는 구간이 1에 걸친 "차이 없음", 전부 합치면은 폭포, 팁 6은
    폭 스윕, 융합 옵티마이저는 스윕을 아직 재지 않은 페이지."""
    tip4 = tip4_section(root, 0.0421, 0.0417, ratio(1.01, 0.98, 1.03))
    pages = {"tip4": tip4, "tip6": tip6_sweep_section(root), "capstone": capstone_section(root),
             "fused-optimizers": fused_section(root)}  # fmt: skip
    return document(CPU_DEVICE, pages)


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_named(folder: Path, doc: dict) -> Path:
    """장치에 맞는 이름(results_file.file_name)으로 씁니다."""
    return write(folder / results_file.file_name(doc), doc)


# --- 모든 페이지를 채운 합성 문서 -------------------------------------------------------------

# 결론 문장이 쓰는 지표를 모두 채웁니다(종류마다 읽는 지표가 다릅니다).
_METRICS = {
    "samples_per_s": 100.0,
    "tokens_per_s": 1000.0,
    "steps_per_s": 10.0,
    "gb_per_s": 5.0,
    "tflop_per_s": 2.0,
    "peak_memory_mib": 400.0,
    "saved_activation_mib": 300.0,
    "worker_memory_growth_mib": 50.0,
    "compile_s": 12.5,
    "one_time_s": 0.75,
}


def _params_for(page: registry.Page, group: registry.Group, index: int) -> dict:
    names = set(re.findall(r"\{(\w+)\}", group.title + group.work))
    names |= {n for label in page.variants.values() for n in re.findall(r"\{(\w+)\}", label)}
    params = {n: ("bf16" if n in TEXT_PARAMS else 2 ** (index % 5 + 1)) for n in names}
    params["num_workers"] = index
    if group.saving_param:
        params[group.saving_param] = 3
    return params


def _ratio_for(scenario: str, index: int) -> tuple[float, float, float]:
    """시나리오마다 변형 index의 (중앙값, 아래, 위)."""
    if scenario == "faster":
        median = 1.2 + index
        return median, median * 0.97, median * 1.03
    if scenario == "slower":
        # 0.83배이고 구간 전체가 0.95 아래인 흔한 경우(이슈 21의 "0.83배(느려짐) 빠릅니다").
        return 0.83, 0.80, 0.86
    if scenario == "same":
        return 1.01, 0.97, 1.04
    # extreme: 검증기가 받는 경계 근처(아주 큰 속도 향상과 아주 큰 느려짐을 번갈아)
    if index % 2:
        return 9.9e5, 9.8e5, 1e6
    return 2e-6, 1e-6, 3e-6


def _break_even_rows(page: registry.Page, scenario: str) -> list[dict]:
    """레지스트리의 본전 계산(breakeven)이 가리키는 key들. 첫 묶음에 "비교" 행으로 넣습니다."""
    group = next(g for g in page.groups.values() if g.conclusion != "ceiling")
    variant = next(iter(page.variants))
    rows: dict[str, dict] = {}
    for spec in page.breakeven:
        slow, fast = (0.02, 0.01) if scenario != "extreme" else (1e5, 1e-9)
        if scenario in ("slower", "same"):
            slow, fast = fast, slow
        median, low, high = _ratio_for(scenario, 1)
        for key, seconds in ((spec.baseline, slow), (spec.variant, fast), (spec.cost, 3.0),
                             (spec.subtract, 1.0)):  # fmt: skip
            if key and key not in rows:
                rows[key] = entry(
                    key, group.key, variant, "other", seconds,
                    params=_params_for(page, group, 0), metrics={spec.cost_metric: 2.5}
                    if spec.cost_metric != "median_s" else {},
                    ratio=ratio(median, low, high),
                )  # fmt: skip
    return list(rows.values())


def full_document(root: Path, device: dict, scenario: str) -> dict:
    """레지스트리의 모든 페이지, 묶음, 변형을 채운 문서. 묶음마다 모든 변형을 넣어, 결론 함수가
    읽을 수 있는 모든 행(기준, 권장, 비교, 천장)이 생깁니다.
    scenario: faster | slower | same | extreme."""
    pages = {}
    for page in registry.load():
        rows = []
        for group in page.groups.values():
            ceiling_group = group.conclusion == "ceiling"
            for index, variant in enumerate(page.variants):
                params = _params_for(page, group, index)
                role = (
                    "ceiling" if ceiling_group
                    else "baseline" if index == 0
                    else "recommended" if index == 1
                    else "other"
                )  # fmt: skip
                median, low, high = _ratio_for(scenario, index)
                metrics = dict(_METRICS)
                if scenario in ("slower", "extreme"):
                    # 메모리가 줄지 않고 느는 경우(이슈 21의 "-39% 줄어듦")
                    for name in ("peak_memory_mib", "saved_activation_mib"):
                        metrics[name] = _METRICS[name] * (1 + index)
                if scenario == "extreme":
                    metrics["samples_per_s"] = 1e15 if index % 2 else 1e-3
                seconds = 0.01 if scenario != "extreme" else (1e-9 if index % 2 else 1e5)
                extra = {}
                if group.conclusion == "waterfall" and index:
                    extra["versus_previous"] = ratio(median, low, high)
                rows.append(entry(
                    f"{group.key}.{variant}", group.key, variant, role, seconds,
                    params=params, metrics=metrics, ratio=(
                        ratio(median, low, high) if role not in ("baseline", "ceiling") else None
                    ), **extra,
                ))  # fmt: skip
        rows += _break_even_rows(page, scenario)
        not_measured = [(next(iter(page.groups)), "합성 문서의 이유입니다.")]
        made = section(page.id, root, rows, not_measured=not_measured)
        made["sweeps"] = {
            key: _sweep(made["measured"], scenario, {
                name: ("bf16" if name in TEXT_PARAMS else 8)
                for name in re.findall(r"\{(\w+)\}", spec.title)
            })
            for key, spec in page.sweeps.items()
        }  # fmt: skip
        pages[page.id] = made
    return document(device, pages)


def _sweep(measured: dict, scenario: str, params: dict | None = None) -> dict:
    """다섯 크기(로그 간격)의 스윕. 시나리오마다 교차점이 있거나(faster: 느림→빠름) 없습니다."""
    code = {name: measured[name] for name in ("date", "commit", "dirty", "snippet_sha256",
                                                "benchmark_sha256")}  # fmt: skip
    points = []
    for index, x in enumerate((16, 64, 256, 1024, 4096)):
        if scenario == "faster":
            median = (0.6, 0.8, 1.0, 1.5, 2.5)[index]
            low, high = median * 0.97, median * 1.03
        else:
            median, low, high = _ratio_for(scenario, index)
        if scenario == "extreme":
            x = 1e15 if index == 4 else 10.0**-index
        points.append({
            "x": x, "rounds": 9, "seed": index, "params": dict(params or {}), "baseline_s": 0.02,
            "variant_s": 0.02 / median, "ratio": ratio(median, low, high),
            "metrics": {"baseline": {"peak_memory_mib": 10.0},
                        "variant": {"peak_memory_mib": 10.0 * (1 + index)}},
        })  # fmt: skip
    for point in points:
        point["variant_s"] = min(max(point["variant_s"], 1e-9), 1e5)
    return {"measured": code, "points": points}


# 결론이 스스로 모순되거나 받침을 모른다고 드러내는 표기(이슈 21): "0.83배(느려짐) 빠릅니다",
# "-39% 줄었습니다", "inf배", "이(가)", "AVX-512 BF16와"(십육에는 받침이 있습니다).
CONTRADICTIONS = re.compile(
    r"느려짐\) 빠릅니다|느려짐\)로, 구간 전체가 기준의 ±5% 밖이라 빠릅니다|"
    r"(?<![A-Za-z_])(inf|nan)(?![A-Za-z_])|"
    r"이\(가\)|은\(는\)|을\(를\)|과\(와\)|\(으\)로|-\d[\d.,]*\s*% 줄|\d배\(느려짐\)|BF16와",
    re.IGNORECASE,
)
