"""빌드 캐시 폴더: 저장소 밖(사용자 캐시 폴더)에 둡니다.

저장소 안의 `.cache/`는 git이 나를 수 있습니다(`git add -f`). 그런 파일을 캐시로 읽으면 풀
리퀘스트가 페이지에 아무 HTML이나 넣을 수 있으므로, 캐시는 git이 닿지 않는 곳에만 둡니다.
폴더를 쓸 수 없거나 가득 차도 빌드는 캐시 없이 계속합니다.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytorch-speed-guide"


def folder(name: str) -> Path:
    return ROOT / name


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def write(path: Path, text: str) -> None:
    """임시 파일에 쓰고 바꿔 끼웁니다. 쓸 수 없으면(읽기 전용, 가득 참) 조용히 넘어갑니다."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        return
