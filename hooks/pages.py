"""레지스트리(guide/pages.toml)에서 사이트의 뼈대를 만듭니다: 메뉴, 제목(H1), 페이지 표, GPU 표시.

- 메뉴: mkdocs.yml의 `nav`에 있는 자리표시 `registry/pages`와 `registry/notebooks`를 레지스트리의
  페이지와 노트북으로 바꿉니다. 팁 목록을 다른 곳에 적지 않습니다.
- 제목: 앞머리에 `page: <id>`가 있는 페이지 맨 앞에 레지스트리의 제목을 H1로 넣습니다.
- `<!-- pages: tips -->`, `<!-- pages: beyond -->`: 그 구역의 페이지 표. `<!-- pages: commands -->`:
  페이지마다 직접 재는 명령(측정 방법 페이지).
- 측정하는 페이지 끝에는 그 페이지의 노트북 링크를 붙입니다.
결과에 관한 것(표, 차트, GPU에서 돌려 보지 않은 GPU 경로의 표시)은 hooks/results.py가 맡습니다.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guide import registry
from hooks import cache, overview
from hooks.page_meta import measured_page

PAGES_MARKER = re.compile(r"^<!--\s*pages:\s*(?P<section>\w+)\s*-->[ \t]*$", re.M)


def registry_nav(docs_dir: Path) -> list[dict]:
    """레지스트리의 구역마다 메뉴 항목: [{"7가지 팁": [{"팁 1: …": "tips/01-….md"}, …]}, …].

    구역에 docs/<구역>/index.md가 있으면 구역의 첫 페이지(소개)로 넣습니다. 소개 없이 페이지가
    하나뿐인 구역(전부 합치면, 진단)은 구역 없이 그 페이지로 바로 가는 항목입니다.
    """
    nav = []
    for section, title in registry.SECTIONS.items():
        pages = registry.pages(section)
        if not pages:
            continue
        items = [{page.heading: page.doc} for page in pages]
        if len(items) == 1 and not (docs_dir / f"{section}/index.md").is_file():
            nav.append(items[0])
            continue
        index = f"{section}/index.md"
        nav.append({title: ([index] if (docs_dir / index).is_file() else []) + items})
    return nav


def notebooks_nav() -> list[dict]:
    return [{f"{page.heading} 노트북": page.notebook} for page in registry.load()]


def on_config(config):
    expanded = []
    for item in config.nav or []:
        if item == "registry/pages":
            expanded += registry_nav(Path(config.docs_dir))
        elif item == "registry/notebooks":
            expanded.append({"노트북": notebooks_nav()})
        else:
            expanded.append(item)
    config.nav = expanded
    return config


def source_link(page, config) -> str:
    """페이지 끝의 한 줄: 저장소와 이 페이지의 원본 파일(그리고 측정 페이지라면 스니펫)."""
    repo = config.extra.get("repository")
    if not repo:
        return ""
    links = [f"[저장소]({repo})", f"[이 페이지의 원본]({repo}/blob/main/docs/{page.file.src_uri})"]
    measured = measured_page(page)
    if measured:
        links.append(f"[코드]({repo}/blob/main/snippets/{measured.snippet}.py)")
    # <small>은 Material이 흐리게(opacity .75) 그려 링크 대비가 WCAG AA에 못 미칩니다.
    return '\n\n<span class="meta-line">' + " · ".join(links) + "</span>\n"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not page.file.src_uri.endswith(".md"):  # 노트북 페이지는 mkdocs-jupyter가 그립니다
        return markdown
    markdown = _with_registry_parts(markdown, page, config, files)
    return markdown.rstrip() + "\n" + source_link(page, config)


def _with_registry_parts(markdown: str, page, config, files) -> str:
    def url(doc: str) -> str:
        found = files.get_file_from_path(doc)
        return get_relative_url(found.url if found else doc, page.file.url)

    def table(match: re.Match[str]) -> str:
        if match["section"] == "commands":
            return overview.commands_table(url)
        if match["section"] not in registry.SECTIONS:
            raise PluginError(f"{page.file.src_uri}: 알 수 없는 구역 {match['section']!r}")
        return overview.pages_table(match["section"], url)

    markdown = PAGES_MARKER.sub(table, markdown)
    measured = measured_page(page)
    if measured is None:
        return markdown
    if page.file.src_uri != measured.doc:
        raise PluginError(
            f"{page.file.src_uri}: {measured.id}의 페이지는 docs/{measured.doc}입니다"
        )
    notebook = "../" + measured.notebook
    # 제목의 id는 레지스트리 id입니다(모두 글자로 시작). slug "16bit"처럼 숫자로 시작하는 id는
    # CSS 선택자에 쓸 수 없고 html-validate가 거절합니다.
    return (
        f"# {measured.heading} {{ #{measured.id} }}\n\n{markdown.rstrip()}\n\n"
        f"## 노트북으로 실행하기 {{ #notebook }}\n\n"
        f"이 페이지의 코드는 [{measured.heading} 노트북]({notebook})으로도 볼 수 있습니다. "
        f'<a href="{notebook}" download>노트북 내려받기(.ipynb)</a>로 받아 자신의 컴퓨터나 GPU에서 '
        "실행해 보세요. 숫자를 다시 재는 명령은 "
        "[측정 방법](../method.md#measure-yourself)에 있습니다.\n"
    )


def on_env(env, config, files):
    # `mkdocs serve`가 다시 빌드할 때 템플릿을 다시 컴파일하지 않게 합니다(hooks/cache.py).
    env.bytecode_cache = cache.TEMPLATES
    return env
