"""빌드 캐시 폴더: 저장소 밖(사용자 캐시 폴더)에 둡니다.

저장소 안의 `.cache/`는 git이 나를 수 있습니다(`git add -f`). 그런 파일을 캐시로 읽으면 풀
리퀘스트가 페이지에 아무 HTML이나 넣을 수 있으므로, 캐시는 git이 닿지 않는 곳에만 둡니다.
폴더를 쓸 수 없거나 가득 차도 빌드는 캐시 없이 계속합니다.
"""

from __future__ import annotations

import os
from pathlib import Path

from jinja2.bccache import Bucket, BytecodeCache

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


class TemplateCode(BytecodeCache):
    """컴파일한 Jinja 템플릿을 이 프로세스의 메모리에 둡니다.

    `mkdocs serve`는 다시 빌드할 때마다 Jinja 환경을 새로 만들어 Material 템플릿을 모두 다시
    컴파일합니다(2코어에서 다시 빌드하는 시간의 약 1/6). 훅 파일은 빌드마다 다시 읽히지만 이 모듈은
    한 번만 import되므로 여기 둔 캐시는 다음 빌드까지 남습니다. Jinja가 원본의 체크섬을 확인하므로
    템플릿을 고치면 그 템플릿만 다시 컴파일합니다. 디스크에는 아무것도 쓰지 않습니다.
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


TEMPLATES = TemplateCode()
