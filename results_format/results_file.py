"""`results/<장치>.json` 읽기·쓰기와 검증 명령: 장치 하나의 파일에 페이지마다 한 부분이 있습니다.

읽기는 바깥 데이터를 다루듯 합니다: results/ 안의 보통 파일만(링크, FIFO, 장치 파일은 거절),
한도만큼만 읽고, JSON은 깊이와 같은 이름의 항목을 확인하며 한 번에 읽습니다(일이 파일 크기에
비례). 쓰기는 검증한 다음 임시 파일에 쓰고 한 번에 바꿔 끼웁니다.

명령줄: `python -m results_format.results_file 파일…`은 빌드와 같은 검사
(results_format/validation.py)를 하고, 문제가 있으면 종료 코드 1입니다.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from results_format.validation import ResultsError, validate

MAX_BYTES = 5_000_000
MAX_DEPTH = 12


def _open_regular(path: Path) -> bytes:
    """보통 파일만 열고 MAX_BYTES + 1바이트까지만 읽습니다(/dev/zero, FIFO, 링크는 거절)."""
    try:
        info = os.lstat(path)
    except OSError as error:
        raise ResultsError(path, "(파일)", f"읽을 수 없습니다 ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ResultsError(
            path, "(파일)", "보통 파일이 아닙니다(링크, FIFO, 장치 파일은 읽지 않습니다)"
        )
    if info.st_size > MAX_BYTES:
        raise ResultsError(path, "(파일)", f"{MAX_BYTES // 1_000_000} MB보다 큽니다")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ResultsError(path, "(파일)", "보통 파일이 아닙니다")
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise ResultsError(path, "(파일)", f"읽을 수 없습니다 ({error.strerror})") from None
    if len(data) > MAX_BYTES:
        raise ResultsError(path, "(파일)", f"{MAX_BYTES // 1_000_000} MB보다 큽니다")
    return data


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"같은 이름의 항목 {key!r}이 두 번 나옵니다")
        found[key] = value
    return found


def _too_deep(doc: object) -> bool:
    """중첩 깊이가 MAX_DEPTH를 넘는지(재귀 없이, 값 하나를 한 번씩만 봅니다)."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children = (
            value.values()
            if isinstance(value, dict)
            else value
            if isinstance(value, list)
            else None
        )
        if children is None:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse(data: bytes, path: Path | str) -> dict:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"{error.start}번째 바이트"
        raise ResultsError(
            path, where, "UTF-8로 읽을 수 없습니다(결과 파일은 UTF-8입니다)"
        ) from None
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=lambda name: float(name.replace("Infinity", "inf")),
        )
    except json.JSONDecodeError as error:
        raise ResultsError(
            path, f"{error.lineno}번째 줄", f"JSON으로 읽을 수 없습니다 ({error.msg})"
        ) from None
    except RecursionError:
        raise ResultsError(path, "(문서 전체)", f"중첩이 {MAX_DEPTH}단계보다 깊습니다") from None
    except ValueError as error:
        raise ResultsError(path, "(문서 전체)", f"JSON으로 읽을 수 없습니다 ({error})") from None
    if _too_deep(doc):
        raise ResultsError(path, "(문서 전체)", f"중첩이 {MAX_DEPTH}단계보다 깊습니다")
    return doc


def load(path: Path, *, check_name: bool = True) -> dict:
    """결과 파일을 읽고 검증합니다. 어떤 문제든 파일과 위치를 짚는 ResultsError가 됩니다.

    check_name=False: 이름을 바꿔 둔 파일(비교할 때의 A.json, B.json)은 이름을 따지지 않습니다.
    """
    path = Path(path)
    doc = parse(_open_regular(path), path)
    if isinstance(doc, dict) and doc.get("schema_version") in (1, 2):
        raise ResultsError(
            path,
            "schema_version",
            f"예전 형식({doc['schema_version']})입니다. 이 빌드는 3을 읽습니다: "
            "`pytest benchmarks --benchmark --publish`로 다시 재세요",
        )
    validate(doc, path)
    if check_name:
        check_identity(doc, path)
    return doc


def load_published(path: Path) -> dict:
    """`results/`에 둘 파일로 읽습니다: load에 더해 드라이 런 결과를 거절합니다. 검증 명령과
    빌드(hooks/results_data.py)가 이 함수를 함께 써서 같은 파일을 받고 거절합니다."""
    doc = load(path)
    if doc["dry_run"]:
        problem = "드라이 런 결과는 results/에 둘 수 없습니다(숫자가 아니라 흐름 확인용입니다)"
        raise ResultsError(path, "dry_run", problem)
    return doc


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "unknown"


def results_name(device: dict) -> str:
    """결과 파일 이름(확장자 없이). GPU는 이름·전력 한도·개수(nvidia-h200-700w-1gpu),
    CPU는 모델, 코어 수, 행렬 곱에 관계된 명령어 확장(cpu-amd-epyc-…-2cores-avx2-avx512bf16).
    개수나 확장이 다르면 다른 파일입니다: AVX-512를 숨긴 VM처럼 모델 이름이 같아도 다른 기계는
    따로 발행합니다."""
    if device["kind"] == "cuda":
        power = f"-{round(device['power_limit_w'])}w" if device["power_limit_w"] else ""
        return f"{_slug(device['name'])}{power}-{device['count']}gpu"
    model = re.sub(r"\((r|tm)\)|cpu|processor|@.*$", "", device["cpu_model"], flags=re.IGNORECASE)
    flags = "".join(f"-{flag.replace('_', '')}" for flag in device["cpu_flags"])
    return f"cpu-{_slug(model)}-{device['usable_cores']}cores{flags}"


def file_name(doc: dict) -> str:
    return ("dry-run-" if doc["dry_run"] else "") + results_name(doc["device"]) + ".json"


def check_identity(doc: dict, path: Path) -> None:
    """파일 이름이 그 안의 장치와 맞는지: CPU 결과를 nvidia-h200-….json으로 올릴 수 없습니다."""
    if Path(path).name != file_name(doc):
        raise ResultsError(path, "(파일 이름)", f"device에 맞는 이름은 {file_name(doc)}입니다")


def device_title(device: dict) -> str:
    """페이지에 보이는 장치 이름. 이름이 같은 GPU(H200 SXM과 NVL)는 전력 한도로 가릅니다."""
    if device["kind"] == "cuda":
        power = f" ({round(device['power_limit_w'])} W)" if device["power_limit_w"] else ""
        count = f" × {device['count']}" if device["count"] > 1 else ""
        return f"{device['name']}{power}{count}"
    return f"CPU {device['usable_cores']}코어 ({device['cpu_model']})"


def serialize(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False, sort_keys=False) + "\n"


def write_atomically(path: Path, doc: dict) -> None:
    """검증한 다음 임시 파일에 모두 쓰고 한 번에 바꿔 끼웁니다. 쓰는 도중에 멈춰도 예전 파일은
    그대로이고 임시 파일은 남지 않습니다(`.`으로 시작해 published_files가 읽지 않습니다)."""
    path = Path(path)
    validate(doc, path)
    text = serialize(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
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


def published_files(root: Path) -> list[Path]:
    """`results/`의 결과 파일(숨은 임시 파일 제외). 보통 파일인지는 load가 확인합니다."""
    folder = root / "results"
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


def _printable(text: str) -> str:
    """터미널에 내보낼 파일 이름: 제어 문자는 \\x1b처럼 보이게 바꿉니다."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


USAGE = "사용법: python -m results_format.results_file 결과파일.json …  (빌드와 같은 검사를 합니다)"


def main(argv: list[str]) -> int:
    if not argv or any(arg.startswith("-") for arg in argv):
        print(USAGE, file=sys.stderr)
        return 0 if argv and set(argv) <= {"-h", "--help"} else 2
    failed = 0
    for name in argv:
        try:
            load_published(Path(name))
        except ResultsError as error:
            print(_printable(str(error)), file=sys.stderr)
            failed += 1
        else:
            print(f"통과: {_printable(name)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
