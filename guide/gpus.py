"""먼저 할 일 페이지의 '내 GPU가 지원하는 것' 표의 데이터(guide/gpus.toml)를 읽습니다.

표는 이 파일 하나에만 있습니다. 페이지의 표(hooks/gpus.py)와 테스트가 모두 여기서 읽습니다.
최고 성능은 guide/peaks.toml에만 적고, 여기서는 그 행의 label로 가리킵니다.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

GPUS = Path(__file__).with_name("gpus.toml")


@dataclass(frozen=True)
class Gpu:
    label: str
    where: str
    cc: str
    bf16: bool
    tf32: bool
    float8: bool
    precision: str
    peak: str  # guide/peaks.toml의 label. 공개된 값을 확인하지 못했으면 빈 문자열입니다.


@functools.cache
def load(path: Path = GPUS) -> tuple[Gpu, ...]:
    with open(path, "rb") as handle:
        return tuple(Gpu(**raw) for raw in tomllib.load(handle)["gpu"])
