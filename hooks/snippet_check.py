"""빌드 시점 검사: 페이지가 끼워 넣는 스니펫 파일과 구역이 실제로 있는지 확인합니다.

pymdownx.snippets의 `check_paths: true`도 빌드를 멈추지만, 어느 페이지가 무엇을 찾다가
실패했는지는 말해 주지 않습니다. 이 훅은 Markdown을 변환하기 전에 같은 검사를 하고,
페이지와 파일과 구역을 이름으로 알려 줍니다. 줄 번호로 끼워 넣는 방식은 코드가 바뀌면
조용히 엉뚱한 줄을 보여 주므로 허용하지 않습니다.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

# pymdownx.snippets와 같은 규칙입니다: 줄 전체가 `--8<-- "경로"` 또는 `--8<-- "경로:구역"`.
INCLUDE = re.compile(r'^[ \t]*--8<--[ \t]+"(?P<target>[^"\n]+)"[ \t]*$', re.MULTILINE)


def find_problem(root: Path, target: str) -> str | None:
    """끼워 넣기 대상 하나를 검사하고, 문제가 있으면 한국어 설명을, 없으면 None을 돌려줍니다."""
    path, _, section = target.partition(":")
    if section and not re.fullmatch(r"[A-Za-z_][\w-]*", section):
        return f'"{target}": 줄 번호 대신 이름 붙은 구역(# --8<-- [start:이름])을 쓰세요'
    file = root / path
    if not file.is_file():
        return f'"{target}": 스니펫 파일이 없습니다({path})'
    if section:
        source = file.read_text(encoding="utf-8")
        for edge in ("start", "end"):
            if f"# --8<-- [{edge}:{section}]" not in source:
                return f'"{target}": {path}에 구역 "{section}"의 [{edge}:{section}] 표시가 없습니다'
    return None


def on_page_markdown(markdown: str, page, config, files) -> str:
    root = Path(config.config_file_path).parent
    targets = INCLUDE.findall(markdown)
    problems = [problem for target in targets if (problem := find_problem(root, target))]
    if problems:
        raise PluginError(
            f"페이지 {page.file.src_uri}의 스니펫 참조가 잘못되었습니다: " + "; ".join(problems)
        )
    return markdown
