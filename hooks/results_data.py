"""빌드가 읽는 측정 결과: `results/*.json`을 읽고 검증해 장치별로 돌려줍니다(측정하지 않습니다).

결과 파일은 바깥 데이터입니다. 읽다가 생긴 모든 문제는 파일과 항목을 짚는 한국어 오류
(`results_file.ResultsError`) 하나가 되고, 훅이 그것을 빌드 오류로 바꿉니다.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from benchmarks import analysis, results_file
from guide import registry


@dataclass(frozen=True)
class Device:
    """결과 파일 하나: 장치 하나의 측정입니다."""

    path: Path
    doc: dict
    stale: dict[str, dict[str, str]]

    @property
    def slug(self) -> str:
        return self.path.stem

    @property
    def env(self) -> dict:
        return self.doc["environment"]

    @property
    def is_cuda(self) -> bool:
        return self.env["device_kind"] == "cuda"

    @property
    def title(self) -> str:
        env = self.env
        if self.is_cuda:
            count = f" × {env['device_count']}" if env["device_count"] > 1 else ""
            return f"{env['device_name']}{count}"
        return f"CPU {env['usable_cores']}코어 ({env['cpu_model']})"

    def applies(self, page: registry.Page) -> bool:
        return page.applies_to(self.env["device_kind"], self.env["device_count"])


def _registry_problem(doc: dict, path: Path) -> results_file.ResultsError | None:
    """결과가 레지스트리에 없는 페이지·묶음·변형을 가리키면 어느 항목인지 짚습니다."""
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"benchmarks[{index}]"
        try:
            page = registry.by_id(entry["page"])
            page.group(entry["group"])
            page.variant_label(entry["variant"], entry["params"])
        except registry.RegistryError as error:
            return results_file.ResultsError(path, where, f"{error} (guide/pages.toml)")
    for index, item in enumerate(doc["not_measured"]):
        try:
            registry.by_id(item["page"])
        except registry.RegistryError as error:
            return results_file.ResultsError(path, f"not_measured[{index}].page", str(error))
    return None


def load_device(path: Path, root: Path) -> Device:
    doc = results_file.load(path)
    if doc["dry_run"]:
        problem = "드라이 런 결과는 results/에 둘 수 없습니다(숫자가 아니라 흐름 확인용입니다)"
        raise results_file.ResultsError(path, "dry_run", problem)
    problem = _registry_problem(doc, path)
    if problem:
        raise problem
    return Device(path, doc, results_file.stale_pages(doc, root))


def _signature(root: Path) -> tuple:
    """results/와 측정한 코드의 상태. 바뀌지 않았으면 다시 읽지 않습니다(`mkdocs serve`)."""
    watched = results_file.published_files(root)
    watched += [page.snippet_path for page in registry.load()]
    watched += [page.benchmark_path for page in registry.load()]
    return tuple((str(p), p.stat().st_mtime_ns if p.exists() else None) for p in watched)


def load_devices(root: Path) -> list[Device]:
    return list(_load_devices(root, _signature(root)))


@functools.lru_cache(maxsize=4)
def _load_devices(root: Path, signature: tuple) -> tuple[Device, ...]:
    devices = [load_device(path, root) for path in results_file.published_files(root)]
    titles: dict[str, Path] = {}
    for device in devices:
        if device.title in titles:
            raise results_file.ResultsError(
                device.path,
                "environment.device_name",
                f"{titles[device.title].name}과(와) 같은 장치 이름({device.title})입니다."
                " 장치마다 결과 파일은 하나입니다",
            )
        titles[device.title] = device.path
    # GPU 결과를 먼저 보여 줍니다(발행하는 숫자의 중심). 그다음 CPU.
    return tuple(sorted(devices, key=lambda d: (not d.is_cuda, d.slug)))


def gpu_verified(devices: list[Device], page: registry.Page) -> bool:
    """지금의 스니펫과 벤치마크 그대로를 CUDA 장치에서 잰 결과가 있는지."""
    current = results_file.fingerprint(page.snippet_path, page.benchmark_path)
    return any(
        entry["fingerprint"] == current
        for device in devices
        if device.is_cuda
        for entry in analysis.entries_for(device.doc, page.id)
    )
