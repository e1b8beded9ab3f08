"""`results/*.json`: 장치 하나의 측정 결과 파일입니다.

형식은 아래 SCHEMA(JSON Schema)가 정합니다. 라운드별 원시 시간은 저장하지 않고 중앙값, IQR,
라운드 수와 그로부터 계산한 값만 남깁니다. 측정한 스니펫 파일의 해시를 함께 저장해서, 코드가
바뀐 뒤 다시 재지 않은 결과를 찾아낼 수 있습니다.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from benchmarks.analysis import METRICS, ROLES

SCHEMA_VERSION = 1

_NUMBER = {"type": "number", "minimum": 0}
_TEXT = {"type": "string", "minLength": 1}
_MAYBE_TEXT = {"type": ["string", "null"]}

ENVIRONMENT_FIELDS = {
    "device_kind": {"enum": ["cuda", "cpu"]},
    "device_name": _TEXT,
    "device_count": {"type": "integer", "minimum": 0},
    "driver": _MAYBE_TEXT,
    "torch": _TEXT,
    "cuda": _MAYBE_TEXT,
    "cudnn": _MAYBE_TEXT,
    "lightning": _MAYBE_TEXT,
    "python": _TEXT,
    "platform": _TEXT,
    "cpu_model": _TEXT,
    "cpu_cores": {"type": "integer", "minimum": 1},
    "usable_cores": {"type": "integer", "minimum": 1},
    "torch_threads": {"type": "integer", "minimum": 1},
    "torch_interop_threads": {"type": "integer", "minimum": 1},
    "tf32_matmul": {"type": "boolean"},
    "tf32_cudnn": {"type": "boolean"},
    "float32_matmul_precision": _TEXT,
    "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"},
    "commit": {"type": ["string", "null"], "pattern": "^[0-9a-f]{40}$"},
    "dirty": {"type": ["boolean", "null"]},
    "pytest_benchmark": _TEXT,
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
            "items": {
                "type": "object",
                "required": [
                    "id",
                    "tip",
                    "key",
                    "group",
                    "variant",
                    "role",
                    "median_s",
                    "iqr_s",
                    "rounds",
                    "iterations",
                    "metrics",
                    "ceiling",
                    "snippet",
                    "snippet_sha256",
                ],  # fmt: skip
                "additionalProperties": False,
                "properties": {
                    "id": _TEXT,
                    "tip": {"type": "string", "pattern": r"^tip\d+$"},
                    "key": _TEXT,
                    "group": _TEXT,
                    "variant": _TEXT,
                    "role": {"enum": list(ROLES)},
                    "median_s": {"type": "number", "exclusiveMinimum": 0},
                    "iqr_s": _NUMBER,
                    "rounds": {"type": "integer", "minimum": 1},
                    "iterations": {"type": "integer", "minimum": 1},
                    "metrics": {
                        "type": "object",
                        "propertyNames": {"enum": list(METRICS)},
                        "additionalProperties": _NUMBER,
                    },
                    "ceiling": _MAYBE_TEXT,
                    "snippet": {"type": "string", "pattern": r"^snippets/\w+\.py$"},
                    "snippet_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "extra": {"type": "object"},
                },
            },
        },
        "not_measured": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tip", "key", "reason"],
                "additionalProperties": False,
                "properties": {
                    "tip": {"type": "string", "pattern": r"^tip\d+$"},
                    "key": _TEXT,
                    "reason": _TEXT,
                },
            },
        },
    },
}

# jsonschema 오류 종류를 한국어로 설명합니다. 목록에 없는 종류는 원래 메시지를 붙입니다.
_VALIDATOR_MESSAGES = {
    "required": "필수 항목이 없습니다",
    "type": "값의 종류가 맞지 않습니다",
    "enum": "허용되지 않는 값입니다",
    "const": "이 빌드가 읽을 수 있는 값이 아닙니다",
    "pattern": "형식이 맞지 않습니다",
    "minimum": "값이 너무 작습니다",
    "exclusiveMinimum": "0보다 커야 합니다",
    "minLength": "비어 있으면 안 됩니다",
    "additionalProperties": "알 수 없는 항목이 있습니다",
    "propertyNames": "알 수 없는 이름입니다",
}


class ResultsError(ValueError):
    """결과 파일이 잘못되었을 때 파일과 항목을 짚어 알려 주는 오류입니다."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"결과 파일 {path}의 {field}: {problem}")


def snippet_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _field_path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(문서 전체)"


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
    problem = _VALIDATOR_MESSAGES.get(error.validator, "잘못된 값입니다")
    return ResultsError(path, _field_path(parts), f"{problem} ({error.message})")


def validate(doc: object, path: Path | str) -> dict:
    """형식(JSON Schema)과 서로 맞아야 하는 값들을 검사합니다. 문제가 있으면 ResultsError."""
    problem = _schema_problem(path, doc)
    if problem:
        raise problem
    seen = set()
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["id"] in seen:
            raise ResultsError(
                path, f"benchmarks[{index}].id", f"{entry['id']}이(가) 두 번 나옵니다"
            )
        seen.add(entry["id"])
    ceilings = {entry["id"] for entry in doc["benchmarks"] if entry["role"] == "ceiling"}
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["ceiling"] is not None and entry["ceiling"] not in ceilings:
            raise ResultsError(
                path,
                f"benchmarks[{index}].ceiling",
                f"{entry['ceiling']}은(는) 이 파일의 천장(role=ceiling) 측정이 아닙니다",
            )
    return doc


def load(path: Path) -> dict:
    """결과 파일을 읽고 검증합니다. 깨진 JSON도 파일과 위치를 짚는 ResultsError가 됩니다."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ResultsError(
            path, f"{error.lineno}번째 줄", f"JSON으로 읽을 수 없습니다 ({error.msg})"
        ) from None
    return validate(doc, path)


def write_atomically(path: Path, doc: dict) -> None:
    """검증한 다음 임시 파일에 모두 쓰고 한 번에 바꿔 끼웁니다.

    쓰는 도중에 멈추거나(Ctrl+C, 디스크 가득 참) 직렬화가 실패해도 예전 파일은 그대로 남습니다.
    """
    path = Path(path)
    validate(doc, path)
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def stale_snippets(doc: dict, root: Path) -> dict[str, list[str]]:
    """측정한 뒤 바뀐(또는 사라진) 스니펫을 팁별로 돌려줍니다: {"tip2": ["snippets/..."]}."""
    stale: dict[str, list[str]] = {}
    for entry in doc["benchmarks"]:
        source = root / entry["snippet"]
        if not source.is_file() or snippet_sha256(source) != entry["snippet_sha256"]:
            paths = stale.setdefault(entry["tip"], [])
            if entry["snippet"] not in paths:
                paths.append(entry["snippet"])
    return stale


def published_files(root: Path) -> list[Path]:
    return sorted((root / "results").glob("*.json"))
