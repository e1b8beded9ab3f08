"""결과 파일의 형식(스키마 3): 항목 이름, 단위, 글자 집합과 숫자 범위를 JSON Schema로 적습니다.

검사는 benchmarks/validation.py가 이 형식과 레지스트리로 합니다.
"""

from __future__ import annotations

SCHEMA_VERSION = 3
# 한 페이지 부분에 모으는 실행의 최대 수(지금 실행 + 예전 실행). 오래된 실행부터 뺍니다.
MAX_RUNS = 8
ROLES = ("baseline", "recommended", "other", "ceiling")
METRICS = (
    "gb_per_s",
    "tflop_per_s",
    "samples_per_s",
    "steps_per_s",
    "tokens_per_s",
    "peak_memory_mib",
    "saved_activation_mib",
    "worker_memory_growth_mib",
    "syncs_per_step",
    "allreduces_per_step",
    "graph_breaks",
    "recompiles",
    "compile_s",
    "one_time_s",
    "precompute_s",
    "loss",
)
# 호출 한 번의 일(per_call)과, 그것을 중앙값으로 나눈 속도의 이름과 단위 크기.
RATES = {
    "bytes": ("gb_per_s", 1e9),
    "flops": ("tflop_per_s", 1e12),
    "samples": ("samples_per_s", 1.0),
    "steps": ("steps_per_s", 1.0),
    "tokens": ("tokens_per_s", 1.0),
}
# 변형마다 일의 양이 다를 때 비율을 낼 일의 단위(앞의 것 먼저).
WORK_ORDER = ("tokens", "samples", "steps")

MAX_NUMBER = 1e15
MAX_SECONDS = 1e5
# 1 ns보다 짧은 중앙값은 측정값이 아닙니다(0에 가까운 값은 나눗셈에서 무한대가 됩니다).
MIN_SECONDS = 1e-9
MAX_RATIO = 1e6
_END = r"\Z"  # `$`는 끝의 줄바꿈 하나를 허락하므로 쓰지 않습니다.
_KEY = r"^[a-z0-9][a-z0-9_.=-]{0,63}" + _END
_PAGE = r"^[a-z0-9-]{1,40}" + _END
_HEX40 = r"^[0-9a-f]{40}" + _END
_HEX64 = r"^[0-9a-f]{64}" + _END
# 장치 이름과 버전은 인쇄 가능한 ASCII만: 비슷해 보이는 글자, 폭 없는 글자, 방향 바꾸기 글자가
# 들어올 틈이 없습니다. 이유와 보고서는 한국어라서 제어 문자와 그런 글자만 막습니다.
_ASCII = r"^[\x20-\x7e]*" + _END
_PRINTABLE = (
    r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]*" + _END
)


def _text(max_length: int, pattern: str = _PRINTABLE, nullable: bool = False) -> dict:
    kind = ["string", "null"] if nullable else "string"
    return {"type": kind, "minLength": 1, "maxLength": max_length, "pattern": pattern}


_NUMBER = {"type": "number", "minimum": 0, "maximum": MAX_NUMBER}
_COUNT = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000}
_SEED = {"type": "integer", "minimum": 0, "maximum": 2**32}
_KEY_TEXT = {"type": "string", "pattern": _KEY}
_DATE = {
    "type": "string",
    "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z" + _END,
}
_RATIO_VALUE = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_RATIO}
_RATIO = {
    "type": ["object", "null"],
    "required": ["median", "low", "high", "confidence"],
    "additionalProperties": False,
    "properties": {
        "median": _RATIO_VALUE,
        "low": _RATIO_VALUE,
        "high": _RATIO_VALUE,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
# 같은 코드로 예전에 잰 실행의 중앙값 비율(새것부터). 페이지는 지금 실행과 함께 구간을 냅니다.
_HISTORY = {"type": "array", "minItems": 1, "maxItems": MAX_RUNS - 1, "items": _RATIO_VALUE}
_METRICS = {
    "type": "object",
    "propertyNames": {"enum": list(METRICS)},
    "additionalProperties": _NUMBER,
}
_PARAMS = {
    "type": "object",
    "maxProperties": 16,
    "propertyNames": {"pattern": r"^[a-z][a-z0-9_]{0,31}" + _END},
    "additionalProperties": {
        "anyOf": [
            {"type": "number", "minimum": -MAX_NUMBER, "maximum": MAX_NUMBER},
            {"type": "string", "pattern": r"^[A-Za-z0-9_.+-]{1,32}" + _END},
        ]
    },
}
# 글자 값을 받는 params 이름(커널 이름, dtype). 나머지는 숫자여야 합니다(표와 문장이 계산에 씁니다).
TEXT_PARAMS = ("kernel", "dtype", "path")
_SHA = {"type": "string", "pattern": _HEX64}
_CODE = {
    "date": _DATE,
    "commit": {"type": ["string", "null"], "pattern": _HEX40},
    "dirty": {"type": ["boolean", "null"]},
    "snippet_sha256": _SHA,
    "benchmark_sha256": _SHA,
}
MEASURED = {
    **_CODE,
    "driver": _text(40, _ASCII, nullable=True),
    "cudnn": _text(40, _ASCII, nullable=True),
    "lightning": _text(40, _ASCII, nullable=True),
    "python": _text(40, _ASCII),
    "platform": _text(200, _ASCII),
    "torch_threads": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "torch_interop_threads": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "gomp_spincount": _text(20, _ASCII, nullable=True),
    "tf32_matmul": {"type": "boolean"},
    "tf32_cudnn": {"type": "boolean"},
    "float32_matmul_precision": {"enum": ["highest", "high", "medium"]},
    "pytest_benchmark": _text(40, _ASCII),
    "seed": _SEED,
    # 예전 실행(새것부터). 비율의 *_history와 같은 순서입니다.
    "earlier_runs": {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_RUNS - 1,
        "items": {
            "type": "object",
            "required": ["date", "seed"],
            "additionalProperties": False,
            "properties": {"date": _DATE, "seed": _SEED},
        },
    },
}
DEVICE = {
    "kind": {"enum": ["cuda", "cpu"]},
    "name": _text(120, _ASCII),
    "count": {"type": "integer", "minimum": 0, "maximum": 1024},
    "power_limit_w": {"type": ["number", "null"], "minimum": 1, "maximum": 10_000},
    "cpu_model": _text(120, _ASCII),
    "cpu_flags": {
        "type": "array",
        "maxItems": 16,
        "uniqueItems": True,
        "items": {"type": "string", "pattern": r"^[a-z0-9_]{1,24}" + _END},
    },
    "cpu_cores": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "usable_cores": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "torch": _text(60, _ASCII),
    "cuda": _text(40, _ASCII, nullable=True),
}
ENTRY = {
    "key": _KEY_TEXT,
    "group": _KEY_TEXT,
    "variant": _KEY_TEXT,
    "role": {"enum": list(ROLES)},
    "computed": {"type": "boolean"},
    "median_s": {"type": ["number", "null"], "minimum": MIN_SECONDS, "maximum": MAX_SECONDS},
    "iqr_s": {"type": ["number", "null"], "minimum": 0, "maximum": MAX_SECONDS},
    "rounds": _COUNT,
    "iterations": _COUNT,
    "params": _PARAMS,
    "metrics": _METRICS,
    "ceiling": {"type": ["string", "null"], "pattern": _KEY},
    "ratio": _RATIO,
    # 전부 합치면(폭포)처럼 변형이 차례로 쌓일 때: 바로 앞 변형과의 짝 비율.
    "versus_previous": _RATIO,
    "ratio_history": _HISTORY,
    "previous_history": _HISTORY,
    "extra": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"report_excerpt": _text(20_000)},
    },
}
POINT = {
    "x": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_NUMBER},
    "rounds": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
    "seed": _SEED,
    "params": _PARAMS,
    "baseline_s": {"type": "number", "minimum": MIN_SECONDS, "maximum": MAX_SECONDS},
    "variant_s": {"type": "number", "minimum": MIN_SECONDS, "maximum": MAX_SECONDS},
    "ratio": {**_RATIO, "type": "object"},
    "ratio_history": _HISTORY,
    "metrics": {
        "type": "object",
        "additionalProperties": False,
        "required": ["baseline", "variant"],
        "properties": {"baseline": _METRICS, "variant": _METRICS},
    },
}


def _object(fields: dict, optional=()) -> dict:
    return {
        "type": "object",
        "required": sorted(set(fields) - set(optional)),
        "additionalProperties": False,
        "properties": fields,
    }


GROUP_INFO = _object(
    {
        "seed": _SEED,
        "rounds": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
        "seconds": {"type": "number", "minimum": 0, "maximum": MAX_SECONDS},
        "width": {"type": ["number", "null"], "minimum": 0, "maximum": MAX_RATIO},
        "target": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    }
)
SWEEP = _object(
    {
        "measured": _object(_CODE),
        "points": {
            "type": "array",
            "minItems": 1,
            "maxItems": 64,
            "items": _object(POINT, ["ratio_history"]),
        },
    }
)
PAGE = _object(
    {
        "measured": _object(MEASURED, optional=("gomp_spincount", "earlier_runs")),
        "groups": {
            "type": "object",
            "maxProperties": 64,
            "propertyNames": {"pattern": _KEY},
            "additionalProperties": GROUP_INFO,
        },
        "benchmarks": {
            "type": "array",
            "maxItems": 500,
            "items": _object(
                ENTRY, ["extra", "versus_previous", "ratio_history", "previous_history"]
            ),
        },
        "not_measured": {
            "type": "array",
            "maxItems": 200,
            "items": _object({"group": _KEY_TEXT, "reason": _text(500)}),
        },
        "sweeps": {
            "type": "object",
            "maxProperties": 16,
            "propertyNames": {"pattern": _KEY},
            "additionalProperties": SWEEP,
        },
    }
)
SCHEMA = _object(
    {
        "schema_version": {"const": SCHEMA_VERSION},
        "dry_run": {"type": "boolean"},
        "device": _object(DEVICE),
        "pages": {
            "type": "object",
            "maxProperties": 200,
            "propertyNames": {"pattern": _PAGE},
            "additionalProperties": PAGE,
        },
    }
)
