"""`results/*.json`: 장치 하나의 측정 결과 파일입니다.

결과 파일은 다른 컴퓨터(GPU 러너, 독자의 GPU)에서 옵니다. 그래서 모든 값을 바깥 데이터로
다룹니다: 형식(JSON Schema)과 길이·문자 집합·유한한 숫자 범위를 검사하고, 쓸 때와 읽을 때
같은 검사를 합니다. 문제는 파일과 항목을 짚는 한국어 오류(ResultsError) 하나가 되고, 절대
traceback이 되지 않습니다. 표시용 한국어 이름은 이 파일에 없습니다(guide/pages.toml).

라운드별 원시 시간은 저장하지 않습니다. 측정한 코드의 지문(스니펫 + 벤치마크 모듈의 SHA-256)을
함께 저장해, 코드가 바뀐 뒤 다시 재지 않은 결과를 찾습니다.

명령줄: `python -m benchmarks.results_file 파일…` 은 파일마다 검증하고, 문제가 있으면 종료 코드 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

SCHEMA_VERSION = 2
ROLES = ("baseline", "recommended", "other", "ceiling")
# 결과 파일의 metrics에 쓸 수 있는 이름. 단위와 한국어 이름은 hooks/에서 붙입니다.
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
    "precompute_s",
    "loss",
)
# 호출 한 번의 일(per_call)로 쓸 수 있는 것과, 중앙값으로 나눠 얻는 속도의 이름.
RATES = {
    "bytes": ("gb_per_s", 1e9),
    "flops": ("tflop_per_s", 1e12),
    "samples": ("samples_per_s", 1.0),
    "steps": ("steps_per_s", 1.0),
    "tokens": ("tokens_per_s", 1.0),
}

# 바깥에서 온 값의 한계. 이 범위를 넘는 값은 측정값이 아니라 망가진(또는 악의적인) 값입니다.
MAX_NUMBER = 1e15
MAX_SECONDS = 1e5
_KEY = r"^[a-z0-9][a-z0-9_.=-]{0,63}$"
# 보여 주는 글자(장치 이름, 이유, 보고서): 제어 문자만 막고 길이를 제한합니다. 출력할 때
# 이스케이프합니다.
_PRINTABLE = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"


def _text(max_length: int, *, nullable: bool = False, min_length: int = 1) -> dict:
    schema = {
        "type": ["string", "null"] if nullable else "string",
        "minLength": min_length,
        "maxLength": max_length,
        "pattern": _PRINTABLE,
    }
    return schema


_NUMBER = {"type": "number", "minimum": 0, "maximum": MAX_NUMBER}
_COUNT = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000}
_KEY_TEXT = {"type": "string", "pattern": _KEY}
_PARAM_VALUE = {
    "anyOf": [
        {"type": "number", "minimum": -MAX_NUMBER, "maximum": MAX_NUMBER},
        {"type": "string", "pattern": r"^[A-Za-z0-9_.+-]{1,32}$"},
    ]
}

ENVIRONMENT_FIELDS = {
    "device_kind": {"enum": ["cuda", "cpu"]},
    "device_name": _text(120),
    "device_count": {"type": "integer", "minimum": 0, "maximum": 1024},
    "driver": _text(40, nullable=True),
    "torch": _text(60),
    "cuda": _text(40, nullable=True),
    "cudnn": _text(40, nullable=True),
    "lightning": _text(40, nullable=True),
    "python": _text(40),
    "platform": _text(200),
    "cpu_model": _text(120),
    "cpu_flags": {
        "type": "array",
        "maxItems": 16,
        "uniqueItems": True,
        "items": {"type": "string", "pattern": r"^[a-z0-9_]{1,24}$"},
    },
    "cpu_cores": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "usable_cores": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "torch_threads": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "torch_interop_threads": {"type": "integer", "minimum": 1, "maximum": 100_000},
    "tf32_matmul": {"type": "boolean"},
    "tf32_cudnn": {"type": "boolean"},
    "float32_matmul_precision": {"enum": ["highest", "high", "medium"]},
    "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"},
    "commit": {"type": ["string", "null"], "pattern": "^[0-9a-f]{40}$"},
    "dirty": {"type": ["boolean", "null"]},
    "pytest_benchmark": _text(40),
}

ENTRY_FIELDS = {
    "id": {"type": "string", "pattern": r"^[a-z0-9-]{1,40}\.[a-z0-9][a-z0-9_.=-]{0,63}$"},
    "page": {"type": "string", "pattern": r"^[a-z0-9-]{1,40}$"},
    "key": _KEY_TEXT,
    "group": _KEY_TEXT,
    "variant": _KEY_TEXT,
    "role": {"enum": list(ROLES)},
    # 계산한 값(예: 워커 하나의 속도 × 코어 수)은 시간을 재지 않았으므로 중앙값과 IQR이 null입니다.
    "computed": {"type": "boolean"},
    "median_s": {
        "type": ["number", "null"],
        "exclusiveMinimum": 0,
        "maximum": MAX_SECONDS,
    },
    "iqr_s": {"type": ["number", "null"], "minimum": 0, "maximum": MAX_SECONDS},
    "rounds": _COUNT,
    "iterations": _COUNT,
    "params": {
        "type": "object",
        "maxProperties": 16,
        "propertyNames": {"pattern": r"^[a-z][a-z0-9_]{0,31}$"},
        "additionalProperties": _PARAM_VALUE,
    },
    "metrics": {
        "type": "object",
        "propertyNames": {"enum": list(METRICS)},
        "additionalProperties": _NUMBER,
    },
    "ceiling": {"type": ["string", "null"], "pattern": r"^[a-z0-9-]{1,40}\.[a-z0-9_.=-]{1,64}$"},
    "snippet": {"type": "string", "pattern": r"^snippets/[a-z0-9_]{1,60}\.py$"},
    "benchmark": {"type": "string", "pattern": r"^benchmarks/bench_[a-z0-9_]{1,60}\.py$"},
    "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "extra": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"report_excerpt": _text(20_000)},
    },
}

SCHEMA = {
    "type": "object",
    "required": ["schema_version", "dry_run", "environment", "benchmarks", "not_measured"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "dry_run": {"type": "boolean"},
        "environment": {
            "type": "object",
            "required": sorted(ENVIRONMENT_FIELDS),
            "additionalProperties": False,
            "properties": ENVIRONMENT_FIELDS,
        },
        "benchmarks": {
            "type": "array",
            "maxItems": 2000,
            "items": {
                "type": "object",
                "required": sorted(set(ENTRY_FIELDS) - {"extra"}),
                "additionalProperties": False,
                "properties": ENTRY_FIELDS,
            },
        },
        "not_measured": {
            "type": "array",
            "maxItems": 2000,
            "items": {
                "type": "object",
                "required": ["page", "group", "reason"],
                "additionalProperties": False,
                "properties": {
                    "page": ENTRY_FIELDS["page"],
                    "group": _KEY_TEXT,
                    "reason": _text(500),
                },
            },
        },
    },
}

# jsonschema 오류 종류를 한국어로 설명합니다. 목록에 없는 종류는 "잘못된 값입니다"로 씁니다.
_VALIDATOR_MESSAGES = {
    "required": "필수 항목이 없습니다",
    "type": "값의 종류가 맞지 않습니다",
    "enum": "허용되지 않는 값입니다",
    "const": "이 빌드가 읽을 수 있는 값이 아닙니다",
    "pattern": "허용되지 않는 글자나 형식입니다",
    "minimum": "값이 너무 작습니다",
    "maximum": "값이 너무 큽니다(측정값으로 볼 수 없습니다)",
    "exclusiveMinimum": "0보다 커야 합니다",
    "minLength": "비어 있으면 안 됩니다",
    "maxLength": "너무 깁니다",
    "maxItems": "항목이 너무 많습니다",
    "maxProperties": "항목이 너무 많습니다",
    "uniqueItems": "같은 값이 두 번 나옵니다",
    "additionalProperties": "형식에 없는 항목입니다",
    "propertyNames": "알 수 없는 이름입니다",
    "anyOf": "허용되지 않는 값입니다",
}
# JSON 안의 중첩이 이보다 깊으면 읽기 전에 거절합니다(재귀 한계로 터지지 않게).
MAX_DEPTH = 12
MAX_BYTES = 5_000_000


class ResultsError(ValueError):
    """결과 파일이 잘못되었을 때 파일과 항목을 짚어 알려 주는 오류입니다."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"결과 파일 {path}의 {field}: {problem}")


def fingerprint(*paths: Path) -> str:
    """측정한 코드의 지문: 스니펫과 벤치마크 모듈(크기와 설정이 있는 곳)의 내용을 합친 해시."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _field_path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(문서 전체)"


def _finite_problem(value, parts=()) -> tuple[list, str] | None:
    """NaN과 무한대를 찾습니다. JSON Schema의 범위 검사는 NaN을 지나쳐 보냅니다."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return list(parts), "유한한 숫자가 아닙니다(NaN이나 무한대는 측정값이 아닙니다)"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _finite_problem(item, (*parts, key))
        if found:
            return found
    return None


def _schema_problem(path: Path | str, doc: object) -> ResultsError | None:
    try:
        import jsonschema
    except ImportError:  # GPU 장비의 Python처럼 jsonschema가 없으면 아래 의미 검사만 합니다.
        return None
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc)
    )
    if error is None:
        return None
    parts = list(error.absolute_path)
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        parts.append(missing[0])
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # 어느 항목이 형식에 없는지 이름까지 짚습니다.
        known = error.schema.get("properties", {})
        parts.extend(sorted(name for name in error.instance if name not in known)[:1])
    problem = _VALIDATOR_MESSAGES.get(error.validator, "잘못된 값입니다")
    if "propertyNames" in error.schema_path and isinstance(error.instance, str):
        # 항목 이름이 틀렸다면 그 이름을 짚습니다(값이 아니라 이름의 문제입니다).
        parts.append(error.instance)
        problem = _VALIDATOR_MESSAGES["propertyNames"]
    return ResultsError(path, _field_path(parts), problem)


def _minimal_shape_problem(path: Path | str, doc: object) -> ResultsError | None:
    """jsonschema 없이도 훅이 traceback 없이 읽을 수 있는지 보는 최소한의 검사입니다."""
    if not isinstance(doc, dict):
        return ResultsError(path, "(문서 전체)", "JSON 객체가 아닙니다")
    for name in ("environment", "benchmarks", "not_measured"):
        expected = dict if name == "environment" else list
        if not isinstance(doc.get(name), expected):
            return ResultsError(path, name, "필수 항목이 없거나 종류가 맞지 않습니다")
    return None


def validate(doc: object, path: Path | str) -> dict:
    """형식, 범위, 서로 맞아야 하는 값을 검사합니다. 문제가 있으면 ResultsError."""
    found = _finite_problem(doc)
    if found:
        raise ResultsError(path, _field_path(found[0]), found[1])
    problem = _schema_problem(path, doc) or _minimal_shape_problem(path, doc)
    if problem:
        raise problem
    seen = set()
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"benchmarks[{index}]"
        if entry["id"] != f"{entry['page']}.{entry['key']}":
            raise ResultsError(path, f"{where}.id", "page와 key로 만든 이름이 아닙니다")
        if entry["id"] in seen:
            raise ResultsError(path, f"{where}.id", f"{entry['id']}이(가) 두 번 나옵니다")
        seen.add(entry["id"])
        timed = entry["median_s"] is not None and entry["iqr_s"] is not None
        if timed == entry["computed"]:
            raise ResultsError(
                path,
                f"{where}.median_s",
                "잰 값에는 중앙값과 IQR이, 계산한 값에는 null이 필요합니다",
            )
    ceilings = {entry["id"] for entry in doc["benchmarks"] if entry["role"] == "ceiling"}
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["ceiling"] is not None and entry["ceiling"] not in ceilings:
            raise ResultsError(
                path,
                f"benchmarks[{index}].ceiling",
                f"{entry['ceiling']}은(는) 이 파일의 천장(role=ceiling) 측정이 아닙니다",
            )
    return doc


def _depth(text: str) -> int:
    """문자열 밖의 괄호 깊이를 셉니다. json.loads가 재귀 한계에 닿기 전에 거절하려는 것입니다."""
    depth = deepest = 0
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        symbol = token[0]
        if symbol in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif symbol in "]}":
            depth -= 1
    return deepest


def load(path: Path) -> dict:
    """결과 파일을 읽고 검증합니다. 어떤 문제든 파일과 위치를 짚는 ResultsError가 됩니다."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ResultsError(path, "(파일)", f"읽을 수 없습니다 ({error.strerror})") from None
    if len(data) > MAX_BYTES:
        raise ResultsError(path, "(파일)", f"{MAX_BYTES // 1_000_000} MB보다 큽니다")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResultsError(
            path, f"{error.start}번째 바이트", "UTF-8로 읽을 수 없습니다(결과 파일은 UTF-8입니다)"
        ) from None
    if _depth(text) > MAX_DEPTH:
        raise ResultsError(path, "(문서 전체)", f"중첩이 {MAX_DEPTH}단계보다 깊습니다")
    try:
        doc = json.loads(text, parse_constant=lambda name: float(name.replace("Infinity", "inf")))
    except json.JSONDecodeError as error:
        raise ResultsError(
            path, f"{error.lineno}번째 줄", f"JSON으로 읽을 수 없습니다 ({error.msg})"
        ) from None
    except (RecursionError, ValueError) as error:
        raise ResultsError(path, "(문서 전체)", f"JSON으로 읽을 수 없습니다 ({error})") from None
    validate(doc, path)
    check_identity(doc, path)
    return doc


def results_name(env: dict) -> str:
    """결과 파일 이름: GPU는 장치 이름(nvidia-h200), CPU는 모델과 코어 수(cpu-amd-epyc-…-2cores)."""
    if env["device_kind"] == "cuda":
        return _slug(env["device_name"])
    model = re.sub(r"\((r|tm)\)|cpu|processor|@.*$", "", env["cpu_model"], flags=re.IGNORECASE)
    return f"cpu-{_slug(model)}-{env['usable_cores']}cores"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "unknown"


def check_identity(doc: dict, path: Path) -> None:
    """파일 이름이 그 안의 장치와 맞는지: CPU 결과를 nvidia-h200.json으로 올릴 수 없습니다."""
    if doc["dry_run"]:
        expected = "dry-run-" + results_name(doc["environment"])
    else:
        expected = results_name(doc["environment"])
    if Path(path).stem != expected:
        raise ResultsError(
            path, "(파일 이름)", f"environment의 장치에 맞는 이름은 {expected}.json입니다"
        )


def serialize(doc: dict) -> str:
    # allow_nan=False: NaN이나 무한대가 섞이면 쓰지 않고 멈춥니다(validate가 먼저 잡습니다).
    return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def write_atomically(path: Path, doc: dict) -> None:
    """검증한 다음 임시 파일에 모두 쓰고 한 번에 바꿔 끼웁니다.

    쓰는 도중에 멈추거나(Ctrl+C, 디스크 가득 참) 직렬화가 실패해도 예전 파일은 그대로 남습니다.
    임시 파일은 `.`으로 시작하고 `.tmp`로 끝나서 `published_files`가 읽지 않습니다. 만든 파일은
    누구나 읽을 수 있게(0644) 둡니다.
    """
    path = Path(path)
    validate(doc, path)
    text = serialize(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w",
        encoding="utf-8",
        dir=path.parent,
        prefix=f".{path.name}.",
        suffix=".tmp",
        delete=False,
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o644)
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def stale_pages(doc: dict, root: Path) -> dict[str, dict[str, str]]:
    """측정한 뒤 바뀐(또는 사라진) 코드를 페이지별로 돌려줍니다: {page: {경로: "바뀜"|"없음"}}."""
    stale: dict[str, dict[str, str]] = {}
    for entry in doc["benchmarks"]:
        sources = [root / entry["snippet"], root / entry["benchmark"]]
        missing = [
            entry[name] for name in ("snippet", "benchmark") if not (root / entry[name]).is_file()
        ]
        if missing:
            changes = dict.fromkeys(missing, "없음")
        elif fingerprint(*sources) != entry["fingerprint"]:
            changes = {entry["snippet"]: "바뀜", entry["benchmark"]: "바뀜"}
        else:
            continue
        stale.setdefault(entry["page"], {}).update(changes)
    return stale


def published_files(root: Path) -> list[Path]:
    """`results/`의 결과 파일. 숨은 임시 파일은 읽지 않습니다. 폴더가 없으면 빈 목록입니다."""
    folder = root / "results"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


def main(argv: list[str]) -> int:
    if not argv:
        print("사용법: python -m benchmarks.results_file 결과파일.json …", file=sys.stderr)
        return 2
    failed = 0
    for name in argv:
        try:
            load(Path(name))
        except ResultsError as error:
            print(error, file=sys.stderr)
            failed += 1
        else:
            print(f"통과: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
