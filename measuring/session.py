"""한 번의 `pytest --benchmark` 실행: 잰 것을 페이지별로 모으고, 문서를 만들어 쓰고, 발행합니다.

발행(`--publish`)은 페이지 단위입니다. 이 실행이 끝까지 잰 페이지만 `results/<장치>.json`에서 그
페이지의 부분을 바꾸고(같은 코드로 잰 예전 실행의 비율은 measuring/history.py가 이어 둡니다),
나머지 페이지는 그대로 둡니다. 예전보다 덜 잰 페이지(묶음이 빠졌거나,
예전에 잰 묶음을 이번에는 건너뛴 페이지), 실패하거나 시간 한도에 걸린 페이지, 다른 장치나 torch
버전의 파일에는 쓰지 않고 이유를 한국어로 알립니다. 측정은 버리지 않고 test-output/에 남깁니다.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from guide import registry
from measuring import history, interleave
from results_format import provenance, results_file
from results_format.schema import SCHEMA_VERSION
from results_format.validation import ResultsError

ROOT = Path(__file__).resolve().parents[1]
LOCAL_RESULTS = ROOT / "test-output" / "results"
PUBLISHED_RESULTS = ROOT / "results"


@dataclass
class PageRecord:
    groups: dict = field(default_factory=dict)
    benchmarks: list = field(default_factory=list)
    not_measured: list = field(default_factory=list)
    sweeps: dict = field(default_factory=dict)
    failed: int = 0
    skipped_by_limit: int = 0

    def measured_groups(self) -> set[str]:
        return {entry["group"] for entry in self.benchmarks}

    def declared_groups(self) -> set[str]:
        return self.measured_groups() | {item["group"] for item in self.not_measured}


@dataclass
class MeasurementRun:
    """한 번의 pytest 실행에서 모은 측정과, 어떻게 재는지에 대한 설정입니다."""

    timing: bool
    gpu: bool
    dry_run: bool
    publish: bool
    sweep: bool
    results_dir: Path | None
    device: torch.device
    settings: interleave.Settings
    seed: int
    max_seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    pages: dict[str, PageRecord] = field(default_factory=dict)
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    benchmark_skipped: int = 0
    deselected: int = 0
    messages: list[str] = field(default_factory=list)
    document: dict | None = None

    @property
    def size_key(self) -> str:
        """크기 표의 열쇠: 작은 입력이면 "quick", 아니면 장치 종류("cuda" 또는 "cpu")."""
        return "quick" if self.dry_run or not self.timing else self.device.type

    def page(self, page_id: str) -> PageRecord:
        return self.pages.setdefault(page_id, PageRecord())

    def note_key(self, page_id: str, key: str, role: str) -> None:
        self.keys.setdefault(page_id, {})[key] = role

    def record_group(self, page_id: str, group: str, info: dict, entries: list[dict]) -> None:
        record = self.page(page_id)
        if info:
            record.groups[group] = info
        record.benchmarks.extend(entries)

    def record_not_measured(self, page_id: str, group: str, reason: str) -> None:
        item = {"group": group, "reason": reason}
        if item not in self.page(page_id).not_measured:
            self.page(page_id).not_measured.append(item)

    def record_sweep(self, page_id: str, key: str, sweep: dict) -> None:
        self.page(page_id).sweeps[key] = sweep

    def dangling_ceilings(self) -> list[str]:
        """다른 측정이 가리키는데 같은 페이지의 천장(role=ceiling)으로 잰 적이 없는 key."""
        found = []
        for page_id, record in self.pages.items():
            roles = self.keys.get(page_id, {})
            for entry in record.benchmarks:
                if entry["ceiling"] and roles.get(entry["ceiling"]) != "ceiling":
                    found.append(f"{page_id}.{entry['key']} → {entry['ceiling']}")
        return found


def _section(run: MeasurementRun, page_id: str, record: PageRecord) -> dict:
    page = registry.by_id(page_id)
    roles = run.keys.get(page_id, {})
    benchmarks = [
        entry | {"ceiling": entry["ceiling"] if roles.get(entry["ceiling"]) == "ceiling" else None}
        for entry in record.benchmarks
    ]
    return {
        "measured": provenance.describe_measured(run.device, page, ROOT, run.seed),
        "groups": record.groups,
        "benchmarks": benchmarks,
        "not_measured": record.not_measured,
        "sweeps": record.sweeps,
    }


def build_document(run: MeasurementRun) -> dict:
    order = [page.id for page in registry.load()]
    pages = sorted(run.pages.items(), key=lambda item: order.index(item[0]))
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": run.dry_run,
        "device": provenance.describe_device(run.device),
        "pages": {page_id: _section(run, page_id, record) for page_id, record in pages},
    }


def _measured(section: dict) -> set[str]:
    return {entry["group"] for entry in section["benchmarks"] if not entry["computed"]}


def page_problem(run: MeasurementRun, page_id: str, new: dict, old: dict | None) -> str | None:
    """이 페이지를 발행하지 못하는 이유(없으면 None)."""
    record, page = run.pages[page_id], registry.by_id(page_id)
    if record.failed:
        return f"실패한 측정이 {record.failed}개 있습니다"
    if record.skipped_by_limit:
        return f"시간 한도에 걸려 {record.skipped_by_limit}개를 재지 못했습니다"
    missing = sorted(set(page.groups) - record.declared_groups())
    if missing:
        return f"잰 적도, 재지 않은 이유도 없는 묶음이 있습니다: {', '.join(missing)}"
    # 같은 코드가 예전에 잰 묶음을 이번에 재지 않았다면(건너뜀 등) 숫자를 잃지 않게 거절합니다.
    # 스니펫이나 벤치마크가 바뀌어 그 묶음을 더는 재지 않는 것이면 바뀐 코드를 따릅니다.
    if old is not None and history.same_code(old["measured"], new["measured"]):
        lost = sorted(_measured(old) - _measured(new))
        if lost:
            return f"예전에 잰 묶음을 이번에는 재지 않았습니다: {', '.join(lost)}"
    return None


def replace_section(old: dict | None, new: dict, *, keep_old_sweeps: bool) -> dict:
    """발행할 페이지 부분: 같은 코드의 예전 실행을 잇고(measuring/history.py), 이번에 재지 않은
    스윕은 예전 것을 둡니다."""
    new = history.carry(old, new)
    if keep_old_sweeps and old:
        new = new | {"sweeps": {**old["sweeps"], **new["sweeps"]}}
    return new


def merge(old_doc: dict | None, new_doc: dict, run: MeasurementRun) -> tuple[dict, list[str]]:
    """발행할 문서와 발행하지 못한 페이지의 이유. 예전 파일의 다른 페이지는 그대로 둡니다."""
    if run.benchmark_skipped:
        return old_doc, [
            f"--benchmark-skip으로 {run.benchmark_skipped}개 측정을 건너뛰어 "
            "아무것도 발행하지 않았습니다"
        ]
    if old_doc is not None:
        changed = [k for k, v in new_doc["device"].items() if old_doc["device"].get(k) != v]
        if changed:
            listing = ", ".join(
                f"{k}: {old_doc['device'].get(k)!r} → {new_doc['device'][k]!r}" for k in changed
            )
            return old_doc, [
                f"예전 결과와 장치 또는 torch 버전이 다릅니다({listing}). 같은 파일에 섞지 않습니다"
            ]
    pages = dict(old_doc["pages"]) if old_doc else {}
    refused = []
    for page_id, section in new_doc["pages"].items():
        old = pages.get(page_id)
        problem = page_problem(run, page_id, section, old)
        if problem:
            refused.append(f"{page_id}: {problem}")
            continue
        pages[page_id] = replace_section(old, section, keep_old_sweeps=not run.sweep)
    order = [page.id for page in registry.load()]
    merged = new_doc | {"pages": {k: pages[k] for k in sorted(pages, key=order.index)}}
    return merged, refused


def read_published(path: Path, run: MeasurementRun) -> tuple[dict | None, str | None]:
    """발행할 자리의 예전 파일. 예전 형식이면 모든 페이지를 잰 실행만 통째로 바꿀 수 있습니다."""
    if not path.exists() and not path.is_symlink():
        return None, None
    try:
        return results_file.load(path), None
    except ResultsError as error:
        complete = {page.id for page in registry.load()} <= set(run.pages)
        if error.field == "schema_version" and complete:
            return None, None
        return None, f"예전 결과 파일을 읽지 못해 바꾸지 않았습니다: {error}"


def publish(run: MeasurementRun, doc: dict) -> bool:
    """results/<장치>.json을 페이지 단위로 바꿉니다. 모두 발행했으면 True."""
    path = (run.results_dir or PUBLISHED_RESULTS) / results_file.file_name(doc)
    old, problem = read_published(path, run)
    if problem:
        run.messages.append(problem)
        return False
    merged, refused = merge(old, doc, run)
    run.messages += [f"발행하지 않은 페이지 · {reason}" for reason in refused]
    if merged is not old and merged["pages"] != (old or {}).get("pages"):
        if not try_write(path, merged, run):
            return False
    return not refused


def try_write(path: Path, doc: dict, run: MeasurementRun) -> bool:
    try:
        results_file.write_atomically(path, doc)
    except (OSError, ResultsError) as error:
        run.messages.append(f"{path}에 쓰지 못했습니다: {error}")
        return False
    run.messages.append(f"결과 파일을 썼습니다: {path}")
    return True


def finish(run: MeasurementRun) -> bool:
    """실행이 끝나면 문서를 만들고 씁니다. 발행을 바랐는데 못 했으면 False(실패로 끝냄)."""
    run.document = doc = build_document(run)
    dangling = run.dangling_ceilings()
    if dangling:
        run.messages.append("천장으로 잰 적이 없는 key를 가리키는 측정: " + ", ".join(dangling))
    local_dir = (
        run.results_dir if run.results_dir and (run.dry_run or not run.publish) else LOCAL_RESULTS
    )
    written = try_write(local_dir / results_file.file_name(doc), doc, run)
    if run.dry_run:
        if run.publish:
            run.messages.append("드라이 런이라서 results/에는 쓰지 않았습니다.")
        return written
    if run.publish:
        published = publish(run, doc)
        if not published:
            run.messages.append(f"발행하지 못한 측정은 {local_dir}에 남겼습니다.")
        return written and published
    return written
