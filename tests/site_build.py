"""테스트들이 함께 쓰는 사이트 빌드 도우미입니다."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mkdocs_build(project: Path, site_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict`를 별도 프로세스로 실행합니다. env로 환경 변수를 더할 수 있습니다."""
    if "MUTANT_UNDER_TEST" in os.environ:
        # 변이 시험(mutmut)의 복사본: 다른 프로세스의 빌드는 어느 변이를 켤지 모릅니다.
        pytest.skip("변이 시험에서는 사이트를 다른 프로세스에서 빌드하지 않습니다")
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)]
    return subprocess.run(command, cwd=project, env=full_env, capture_output=True, text=True)


def copy_project(destination: Path) -> Path:
    """사이트를 빌드하는 데 필요한 것만 복사합니다. 복사본을 고쳐 빌드가 실패하는지 볼 때 씁니다.

    tests/도 복사합니다. 페이지의 "(✓ 테스트: …)" 표시가 가리키는 테스트가 있는지 빌드가
    확인하기 때문입니다(hooks/marks.py).
    """
    names = ("docs", "snippets", "hooks", "overrides", "benchmarks", "results", "guide", "tests",
             "measuring", "results_format", "report", "torchdoctor")  # fmt: skip
    for name in names:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, destination / name, ignore=shutil.ignore_patterns("__pycache__")
            )
    # 노트북의 첫 셀이 설치할 버전을 이 두 파일에서 읽습니다(hooks/notebooks.py).
    for name in ("mkdocs.yml", "constraints.txt", "requirements.txt"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, destination / name)
    return destination


def section_lines(source: str, name: str) -> str:
    """pymdownx.snippets처럼 구역 안의 줄을 꺼내고, 안쪽의 다른 구역 표시는 뺍니다."""
    lines = source.splitlines()
    start = lines.index(f"# --8<-- [start:{name}]")
    end = lines.index(f"# --8<-- [end:{name}]")
    body = [line for line in lines[start + 1 : end] if "# --8<-- [" not in line]
    return textwrap.dedent("\n".join(body))


def page_quotes(page: str, message: str) -> bool:
    """페이지(docs/ 기준 경로)가 이 오류·경고 메시지를 그대로 인용하는지 봅니다.

    `text` 블록과 `Error: …`/`Warning: …`로 시작하는 인라인 코드를 인용으로 봅니다. 인용 끝의
    `...`는 "뒤는 생략"으로, 자리표시자 ` N,`은 숫자로 읽습니다. 앞의 예외 이름은 떼고 비교합니다.
    """
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    fences = [m[1] for m in re.finditer(r"^[ \t]*```text\n(.*?)^[ \t]*```", text, re.M | re.S)]
    candidates = fences + [line for f in fences for line in f.splitlines()]
    candidates += re.findall(r"`(\w+(?:Error|Warning): [^`]+)`", text)
    actual = " ".join(message.split())
    for candidate in candidates:
        quote = re.sub(r"^\w+(?:Error|Warning): ", "", " ".join(candidate.split()))
        pattern = re.escape(quote).replace(r"\.\.\.", ".*").replace(" N,", r" \d+,")
        if quote and re.fullmatch(pattern, actual, re.S):
            return True
    return False
