"""빌드 시점 렌더링: 문장 끝의 "(✓ 테스트: 파일::테스트)" 표시를 그 테스트로 가는 링크로 바꿉니다.

페이지는 `(✓ 테스트: test_tip4_create_on_device.py::test_article_code_raises)`처럼 문장을 확인하는
테스트의 이름을 적습니다. CUDA GPU에서만 도는 테스트라면 `(✓ 테스트, CUDA: …)`입니다. 이름이 없는
표시나, tests/에 없는 테스트를 가리키는 표시는 빌드를 멈춥니다(P10). 테스트가 정말 그 문장을
확인하는지는 사람이 읽어야 하지만, 표시가 가리키는 테스트가 있는지는 기계가 확인합니다.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from markupsafe import Markup
from mkdocs.exceptions import PluginError

TESTS = Path(__file__).resolve().parents[1] / "tests"
# 이름이 있는 표시: 파일 이름과 테스트 함수 이름(클래스 안이면 Class::test).
MARK = re.compile(r"\(✓ 테스트(?P<cuda>, CUDA)?: (?P<file>test_\w+\.py)::(?P<name>\w+(?:::\w+)?)\)")
# 모든 표시: 괄호 안 어디에 있든 "✓ 테스트"로 시작하는 것. MARK와 맞지 않는 것은 이름이 없거나
# 형식이 틀린 표시입니다("(miss 0, ✓ 테스트: …)"처럼 괄호 가운데에 끼운 것도 여기서 잡습니다).
ANY_MARK = re.compile(r"\([^()]*?✓ 테스트[^)]*\)")


@functools.cache
def _defined_tests(path: Path, mtime_ns: int) -> frozenset[str]:
    """파일에 정의된 테스트 이름: 맨 위의 함수와 `Class::method`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{item.name}" for item in node.body if hasattr(item, "name")}
    return frozenset(names)


def test_exists(file: str, name: str, tests: Path = TESTS) -> bool:
    path = tests / file
    if not path.is_file() or not name.split("::")[-1].startswith("test"):
        return False
    return name in _defined_tests(path, path.stat().st_mtime_ns)


def problems(markdown: str, tests: Path = TESTS) -> list[str]:
    """페이지의 표시 가운데 이름이 없거나 없는 테스트를 가리키는 것들(한국어 설명)."""
    found = []
    for match in ANY_MARK.finditer(markdown):
        named = MARK.fullmatch(match[0])
        if named is None:
            found.append(
                f"{match[0]}: 확인하는 테스트의 이름이 없습니다"
                " (예: `(✓ 테스트: test_파일.py::test_이름)`)"
            )
        elif not test_exists(named["file"], named["name"], tests):
            found.append(f"{match[0]}: tests/{named['file']}에 {named['name']} 테스트가 없습니다")
    return found


def render_mark(match: re.Match[str], repository: str) -> str:
    test_id = f"tests/{match['file']}::{match['name']}"
    text = "✓ 테스트, CUDA" if match["cuda"] else "✓ 테스트"
    href = f"{repository}/blob/main/tests/{match['file']}" if repository else None
    title = f"이 문장을 확인하는 테스트: {test_id}"
    if match["cuda"]:
        title += " (CUDA GPU가 있는 컴퓨터에서만 실행)"
    if href:
        link = Markup('<a class="test-mark" href="{}" title="{}">{}</a>').format(href, title, text)
    else:
        link = Markup('<span class="test-mark" title="{}">{}</span>').format(title, text)
    return f"({link})"


def on_page_markdown(markdown: str, page, config, files) -> str:
    found = problems(markdown)
    if found:
        raise PluginError(f"{page.file.src_uri}의 (✓ 테스트) 표시: " + "; ".join(found))
    repository = str(config.extra.get("repository", ""))
    return MARK.sub(lambda match: render_mark(match, repository), markdown)
