"""독자의 코드가 어디인지: 스택에서 독자의 파일에 있는 첫 프레임(파일과 줄)을 찾습니다.

torch, Lightning, site-packages, 표준 라이브러리, torchdoctor 자신은 독자의 파일이 아닙니다.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def _foreign_roots() -> tuple[str, ...]:
    roots = {HERE}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for path in site.getsitepackages() + [site.getusersitepackages()]:
        roots.add(os.path.realpath(path))
    # 개발 설치(pip install -e)한 torch나 Lightning도 독자의 코드가 아닙니다.
    for name in (
        "torch",
        "lightning",
        "pytorch_lightning",
        "lightning_fabric",
        "_pytest",
        "pluggy",
    ):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            roots.add(os.path.dirname(os.path.realpath(module.__file__)))
    return tuple(sorted(roots))


@functools.cache
def is_reader_file(filename: str) -> bool:
    """이 파일이 독자의 코드인지.

    `<frozen ...>`, `<string>` 같은 이름은 아닙니다(노트북 칸은 맞습니다)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input")
    real = os.path.realpath(filename)
    return not any(real == root or real.startswith(root + os.sep) for root in _foreign_roots())


def reader_frame(depth: int = 1) -> tuple[str, int] | None:
    """지금 스택에서 독자의 파일에 있는 가장 안쪽 프레임의 (파일, 줄). 없으면 None."""
    frame = sys._getframe(depth)
    while frame is not None:
        if is_reader_file(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def short(filename: str | None) -> str | None:
    """보고서에 쓰는 경로: 지금 폴더 아래면 상대 경로로 씁니다."""
    if filename is None:
        return None
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
