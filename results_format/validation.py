"""결과 파일의 검증: 빌드와 검증 명령이 같은 함수로 같은 파일을 받고 거절합니다.

결과 파일은 다른 컴퓨터에서 오는 바깥 데이터입니다. 형식(results_format/schema.py), 글자 집합,
유한한 숫자 범위, 서로 맞아야 하는 값, 그리고 레지스트리(guide/pages.toml)에
있는 페이지·묶음·변형인지를 여기서 모두 검사합니다. 문제는 파일과 항목을 짚는 한국어
오류(ResultsError) 하나가 됩니다.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

from guide import registry
from results_format.schema import SCHEMA, TEXT_PARAMS

_MESSAGES = {
    "required": "필수 항목이 없습니다",
    "type": "값의 종류가 맞지 않습니다",
    "enum": "허용되지 않는 값입니다",
    "const": "이 빌드가 읽을 수 있는 값이 아닙니다",
    "pattern": "허용되지 않는 글자나 형식입니다",
    "minimum": "값이 너무 작습니다(측정값으로 볼 수 없습니다)",
    "maximum": "값이 너무 큽니다(측정값으로 볼 수 없습니다)",
    "exclusiveMinimum": "0보다 커야 합니다",
    "minLength": "비어 있으면 안 됩니다",
    "maxLength": "너무 깁니다",
    "minItems": "비어 있으면 안 됩니다",
    "maxItems": "항목이 너무 많습니다",
    "maxProperties": "항목이 너무 많습니다",
    "uniqueItems": "같은 값이 두 번 나옵니다",
    "additionalProperties": "형식에 없는 항목입니다",
    "propertyNames": "알 수 없는 이름입니다",
    "anyOf": "허용되지 않는 값입니다",
}


class ResultsError(ValueError):
    """결과 파일이 잘못되었을 때 파일과 항목을 짚어 알려 주는 오류입니다."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"결과 파일 {path}의 {field}: {problem}")


def field_path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(문서 전체)"


def _finite_problem(value, parts=()):
    """NaN과 무한대를 찾습니다. JSON Schema의 범위 검사는 NaN을 지나쳐 보냅니다."""
    if isinstance(value, float) and not math.isfinite(value):
        return list(parts)
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in children:
        found = _finite_problem(item, (*parts, key))
        if found is not None:
            return found
    return None


def _schema_problem(path, doc) -> ResultsError | None:
    import jsonschema

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc)
    )
    if error is None:
        return None
    parts = list(error.absolute_path)
    if error.validator == "required":
        parts.append(next(n for n in error.validator_value if n not in error.instance))
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        parts.extend(sorted(name for name in error.instance if name not in known)[:1])
    problem = _MESSAGES.get(error.validator, "잘못된 값입니다")
    if "propertyNames" in error.schema_path and isinstance(error.instance, str):
        parts.append(error.instance)
        problem = _MESSAGES["propertyNames"]
    return ResultsError(path, field_path(parts), problem)


def validate(doc: object, path: Path | str) -> dict:
    """형식과 범위, 서로 맞아야 하는 값, 레지스트리를 검사합니다. 문제가 있으면 ResultsError."""
    found = _finite_problem(doc)
    if found is not None:
        raise ResultsError(
            path, field_path(found), "유한한 숫자가 아닙니다(NaN이나 무한대는 측정값이 아닙니다)"
        )
    problem = _schema_problem(path, doc)
    if problem:
        raise problem
    device = doc["device"]
    if (device["kind"] == "cuda") != (device["count"] >= 1):
        raise ResultsError(path, "device.count", "CUDA 장치는 1개 이상, CPU는 0이어야 합니다")
    for page_id, section in doc["pages"].items():
        _check_page(path, page_id, section)
    return doc


def _check_date(path, where: str, text: str) -> None:
    try:
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise ResultsError(path, where, "있을 수 없는 날짜입니다") from None


def _check_page(path, page_id: str, section: dict) -> None:  # noqa: C901 (검사할 항목마다 한 갈래)
    where = f"pages.{page_id}"
    try:
        page = registry.by_id(page_id)
    except registry.RegistryError as error:
        raise ResultsError(path, where, f"{error} (guide/pages.toml)") from None
    _check_date(path, f"{where}.measured.date", section["measured"]["date"])
    for key in section["groups"]:
        _registry(path, f"{where}.groups.{key}", lambda k=key: page.group(k))
    keys: dict[str, dict] = {}
    for index, entry in enumerate(section["benchmarks"]):
        at = f"{where}.benchmarks[{index}]"
        _registry(
            path,
            at,
            lambda e=entry: (page.group(e["group"]), page.variant_label(e["variant"], e["params"])),
        )
        _check_params(path, f"{at}.params", entry["params"])
        if entry["key"] in keys:
            raise ResultsError(path, f"{at}.key", f"{entry['key']}이 두 번 나옵니다")
        keys[entry["key"]] = entry
        _check_timing(path, at, entry)
    baselines = {e["group"] for e in keys.values() if e["role"] == "baseline" and not e["computed"]}
    for index, entry in enumerate(section["benchmarks"]):
        at = f"{where}.benchmarks[{index}]"
        ceiling = entry["ceiling"]
        if ceiling is not None and keys.get(ceiling, {}).get("role") != "ceiling":
            raise ResultsError(
                path, f"{at}.ceiling", f"{ceiling}은 이 페이지의 천장(role=ceiling) 측정이 아닙니다"
            )
        compared = entry["group"] in baselines and entry["role"] not in ("baseline", "ceiling")
        if compared and not entry["computed"] and entry["ratio"] is None:
            raise ResultsError(
                path, f"{at}.ratio", "기준이 있는 묶음의 변형에는 비율과 구간이 필요합니다"
            )
        if not compared and entry["ratio"] is not None:
            raise ResultsError(
                path, f"{at}.ratio", "기준과 비교하지 않는 항목에는 비율이 없어야 합니다"
            )
        _check_history(path, at, entry, len(section["measured"].get("earlier_runs", [])))
    for index, item in enumerate(section["not_measured"]):
        _registry(
            path, f"{where}.not_measured[{index}].group", lambda g=item["group"]: page.group(g)
        )
    for key, sweep in section["sweeps"].items():
        _registry(path, f"{where}.sweeps.{key}", lambda k=key: page.sweep(k))
        _check_date(path, f"{where}.sweeps.{key}.measured.date", sweep["measured"]["date"])
        for index, point in enumerate(sweep["points"]):
            _check_ratio(path, f"{where}.sweeps.{key}.points[{index}].ratio", point["ratio"])


def _check_history(path, at: str, entry: dict, earlier: int) -> None:
    """예전 실행의 비율은 그 비율이 있을 때만, 예전 실행의 수보다 많지 않게 있어야 합니다."""
    for name, ratio in (("ratio_history", "ratio"), ("previous_history", "versus_previous")):
        if name not in entry:
            continue
        if entry.get(ratio) is None:
            raise ResultsError(path, f"{at}.{name}", f"{ratio}가 없는데 예전 실행의 값이 있습니다")
        if len(entry[name]) > earlier:
            raise ResultsError(path, f"{at}.{name}", f"예전 실행({earlier}번)보다 값이 많습니다")


def _registry(path, where, check) -> None:
    try:
        check()
    except registry.RegistryError as error:
        raise ResultsError(path, where, f"{error} (guide/pages.toml)") from None


def _check_timing(path, at: str, entry: dict) -> None:
    timed = entry["median_s"] is not None and entry["iqr_s"] is not None
    if timed == entry["computed"]:
        raise ResultsError(
            path, f"{at}.median_s", "잰 값에는 중앙값과 IQR이, 계산한 값에는 null이 필요합니다"
        )
    if entry["computed"] and (entry["role"] != "ceiling" or entry["rounds"] != 0):
        raise ResultsError(
            path, f"{at}.computed", "계산한 값은 라운드 0의 천장(role=ceiling)뿐입니다"
        )
    if timed and entry["rounds"] < 1:
        raise ResultsError(path, f"{at}.rounds", "잰 값은 라운드가 1 이상이어야 합니다")
    for name in ("ratio", "versus_previous"):
        if entry.get(name) is not None:
            _check_ratio(path, f"{at}.{name}", entry[name])


def _check_params(path, at: str, params: dict) -> None:
    for name, value in params.items():
        if isinstance(value, str) and name not in TEXT_PARAMS:
            raise ResultsError(path, f"{at}.{name}", "숫자여야 하는 값입니다")


def _check_ratio(path, at: str, ratio: dict) -> None:
    if not ratio["low"] <= ratio["median"] <= ratio["high"]:
        raise ResultsError(path, at, "구간이 low ≤ median ≤ high가 아닙니다")
