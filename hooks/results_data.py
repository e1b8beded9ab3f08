"""빌드가 읽는 측정 결과: `results/*.json`을 한 번 읽고 검증하고 분석해 훅에 넘깁니다.

결과 파일은 바깥 데이터입니다. 읽기와 검증은 `python -m results_format.results_file`과 같은 함수가
하므로 검증 명령이 통과시킨 파일은 빌드도 받고, 거절한 파일은 빌드도 거절합니다. 분석
(report/analysis.py)은 빌드마다 장치 하나에 한 번만 하고, 결과 파일과 측정한 코드가 그대로면
`mkdocs serve`가 다시 빌드할 때 다시 하지 않습니다.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from guide import registry
from report import analysis
from results_format import provenance, results_file


@dataclass(frozen=True)
class Device:
    """결과 파일 하나: 장치 하나의 측정과 그 분석."""

    path: Path
    doc: dict
    views: dict[str, analysis.PageView]

    @property
    def slug(self) -> str:
        return self.path.stem

    @property
    def device(self) -> dict:
        return self.doc["device"]

    @property
    def is_cuda(self) -> bool:
        return self.device["kind"] == "cuda"

    @property
    def title(self) -> str:
        return results_file.device_title(self.device)

    def applies(self, page: registry.Page) -> bool:
        return page.applies_to(self.device["kind"], self.device["count"])

    def view(self, page: registry.Page) -> analysis.PageView:
        return self.views[page.id]

    def measured(self, page: registry.Page) -> bool:
        return self.views[page.id].measured

    @property
    def threads(self) -> list[int]:
        """이 장치의 페이지들을 잰 torch 스레드 수(CPU 배수를 읽는 데 필요합니다)."""
        return sorted({s["measured"]["torch_threads"] for s in self.doc["pages"].values()})

    @property
    def column_title(self) -> str:
        """표의 열 제목: CPU는 코어 수만이 아니라 잰 스레드 수까지 씁니다."""
        if self.is_cuda or not self.threads:
            return self.title
        threads = "·".join(map(str, self.threads))
        return f"{self.title} · torch 스레드 {threads}개"


def load_device(path: Path) -> Device:
    doc = results_file.load_published(path)
    return Device(path, doc, analysis.analyze(doc))


def _signature(root: Path) -> tuple:
    """results/와 측정한 코드의 상태. 바뀌지 않았으면 다시 읽지 않습니다(`mkdocs serve`)."""
    watched = results_file.published_files(root)
    for page in registry.load():
        watched += [page.snippet_path, page.benchmark_path]
    return tuple((str(p), p.stat().st_mtime_ns if p.exists() else None) for p in watched)


def load_devices(root: Path) -> list[Device]:
    return list(_load_devices(root, _signature(root)))


@functools.lru_cache(maxsize=4)
def _load_devices(root: Path, signature: tuple) -> tuple[Device, ...]:
    # 장치 이름은 인쇄 가능한 ASCII뿐이고(비슷해 보이는 글자가 들어올 수 없음), 파일 이름은 제목을
    # 이루는 값(이름, 전력 한도, 개수 또는 CPU 모델과 코어 수)으로 정해지므로(check_identity) 두
    # 파일의 제목이 같을 수 없습니다.
    devices = [load_device(path) for path in results_file.published_files(root)]
    # GPU 결과를 먼저 보여 줍니다(발행하는 숫자의 중심). 그다음 CPU.
    return tuple(sorted(devices, key=lambda d: (not d.is_cuda, d.slug)))


# 홈의 개요가 보여 주는 CPU 하나(결과 파일 이름). 다른 CPU의 결과는 그 CPU가 잰 페이지와 전체 결과
# 페이지에만 보입니다. 기준 CPU를 바꾸려면 이 값을 바꾸고 그 CPU에서 모든 페이지를 잽니다.
# 지금은 같은 코드로 여러 번 실행해 실행 사이의 구간을 낸 CPU입니다(docs/method.md#runs).
REFERENCE_CPU = (
    "cpu-intel-xeon-family-6-model-167-2cores-avx2-avx512f-avx512bf16-avx512fp16-amxbf16-amxtile"
)


def home_devices(devices: list[Device]) -> list[Device]:
    """홈의 개요에 보일 장치: 모든 GPU와 기준 CPU 하나(없으면 페이지를 가장 많이 잰 CPU)."""
    cpus = [d for d in devices if not d.is_cuda]
    reference = next((d for d in cpus if d.slug == REFERENCE_CPU), None)
    if reference is None and cpus:
        reference = max(cpus, key=lambda d: len(d.doc["pages"]))
    return [d for d in devices if d.is_cuda or d is reference]


def page_devices(devices: list[Device], page: registry.Page) -> list[Device]:
    """페이지에 보일 장치: 그 페이지를 잰 장치만(다른 CPU가 한 페이지만 올려도 모든 페이지에 빈
    칸이 생기지 않게)."""
    return [d for d in devices if d.measured(page)]


def folded_devices(shown: list[Device], devices: list[Device]) -> set[str]:
    """페이지에서 접어 둘 장치: 기준 CPU가 그 페이지에 보일 때의 다른 CPU들(펼치면 보입니다)."""
    reference = next((d for d in home_devices(devices) if not d.is_cuda), None)
    if not any(d is reference for d in shown):
        return set()
    return {d.slug for d in shown if not d.is_cuda and d is not reference}


def gpu_verified(devices: list[Device], page: registry.Page) -> bool:
    """지금의 스니펫과 벤치마크 그대로를 CUDA 장치에서 잰 결과가 있는지."""
    current = provenance.code_hashes(page)
    for device in devices:
        section = device.doc["pages"].get(page.id)
        if device.is_cuda and section:
            measured = section["measured"]
            if all(measured[key] == value for key, value in current.items()):
                return True
    return False
