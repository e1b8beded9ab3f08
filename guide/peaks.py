"""GPU마다 공개된 밀집 bf16 최고 성능(guide/peaks.toml)을 읽고, 측정한 장치와 맞춰 봅니다.

표는 이 파일 하나에만 있습니다. 전부 합치면의 MFU(벤치마크), 페이지의 최고 성능 표(훅),
테스트가 모두 여기서 읽습니다. 먼저 할 일 페이지의 GPU 표(hooks/gpus.py)도 마지막 열을
여기서 가져옵니다.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

PEAKS = Path(__file__).with_name("peaks.toml")


@dataclass(frozen=True)
class Peak:
    label: str
    name: str
    bf16_dense_tflops: float
    source: str
    min_power_w: float | None = None
    max_power_w: float | None = None

    def matches(self, device_name: str, power_w: float | None) -> bool:
        if not re.search(self.name, device_name, re.IGNORECASE):
            return False
        if power_w is None:
            # 전력 한도를 모르면, 전력으로만 가를 수 있는 제품은 고르지 않습니다(추측하지 않음).
            return self.min_power_w is None and self.max_power_w is None
        low = self.min_power_w if self.min_power_w is not None else 0
        high = self.max_power_w if self.max_power_w is not None else float("inf")
        return low <= power_w <= high


@functools.cache
def load(path: Path = PEAKS) -> tuple[Peak, ...]:
    with open(path, "rb") as handle:
        return tuple(Peak(**raw) for raw in tomllib.load(handle)["gpu"])


def match(device_name: str, power_w: float | None) -> Peak | None:
    """장치 이름과 전력 한도에 맞는 항목 하나. 없거나 둘 이상 맞으면 None(모른다고 답합니다)."""
    found = [peak for peak in load() if peak.matches(device_name, power_w)]
    return found[0] if len(found) == 1 else None
