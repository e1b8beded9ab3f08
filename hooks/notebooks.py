"""빌드 시점 생성: 측정하는 페이지마다 스니펫 모듈에서 Jupyter 노트북을 만들어 사이트에 넣습니다.

페이지 목록은 guide/pages.toml(레지스트리)에서 옵니다. 노트북의 코드는 스니펫 모듈을 구역 단위로
나눈 것일 뿐이라서, 스니펫이 바뀌면 노트북도
같이 바뀝니다(복사한 코드가 없습니다). 만든 노트북은 `.cache/notebooks/`에 쓰고, mkdocs-jupyter가
그것을 페이지로 그립니다. 평소 빌드는 실행하지 않고(빠른 `mkdocs serve`), `EXECUTE_NOTEBOOKS=true`
일 때만 실행해 출력을 보여 줍니다. 이 훅은 노트북을 만들기만 하고 실행하거나 측정하지 않습니다.

내려받은 노트북은 저장소 없이 실행됩니다. 첫 코드 셀이 그 노트북의 코드가 import하는 바깥 꾸러미만
저장소가 고정한 버전으로 설치하고(`%pip install`), 명령줄과 장치 고르기(snippets/_cli.py)는 셀에
그대로 들어갑니다.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import nbformat
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from nbformat import v4

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guide import registry
from hooks import cache
from hooks.notebook_install import install_cell

# 스크립트로 실행할 때의 명령줄과 장치 고르기. 노트북에는 pick_device만 넣습니다.
CLI = registry.ROOT / "snippets" / "_cli.py"
SECTION = re.compile(r"^# --8<-- \[(?P<edge>start|end):(?P<name>[\w-]+)\]$")
# nbconvert 템플릿이 넣는 두 블록: MathJax(빈 src의 script)와 CDN에서 mermaid를 import하는 모듈.
CDN_BLOCKS = re.compile(
    r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->"
    r"|<script type=\"module\">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>",
    re.DOTALL,
)
SECTION_TITLES = {
    "imports": "가져오기",
    "article_2020": "기사 원문(2020)의 코드",
    "slow": "느린 코드",
    "fast": "빠른 코드",
    "lightning": "Lightning 코드",
    None: "도우미 코드",
}
# 프로세스를 여러 개 띄우는 모듈(DataLoader 워커, DDP)은 노트북 안에서 바로 실행할 수 없습니다.
# spawn(macOS, Windows의 기본값)이 노트북에 정의된 클래스와 함수를 찾지 못하고, Lightning DDP는
# 스크립트를 다시 실행하기 때문입니다. 그래서 레지스트리의 `run_as_script = true`인 모듈은 파일로
# 쓴 다음 실행합니다.


def markdown_cell(text: str) -> dict:
    return v4.new_markdown_cell(text.strip())


def code_cell(code: str) -> dict:
    return v4.new_code_cell(code.strip("\n"))


def split_module(source: str) -> tuple[str, list[tuple[str | None, str]]]:
    """모듈을 (docstring, [(구역 이름 또는 None, 코드)]) 로 나눕니다. `__main__` 블록은 뺍니다."""
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree) or ""
    body_start = tree.body[0].end_lineno if docstring else 0
    guard = tree.body[-1]
    body_end = (
        guard.lineno - 1 if "__main__" in ast.unparse(getattr(guard, "test", guard)) else None
    )
    chunks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in source.splitlines()[body_start:body_end]:
        marker = SECTION.match(line.strip())
        if marker:
            chunks.append((marker["name"] if marker["edge"] == "start" else None, []))
        else:
            chunks[-1][1].append(line)
    code = [(name, "\n".join(lines).strip("\n")) for name, lines in chunks]
    return docstring, [(name, text) for name, text in code if text.strip()]


def chunk_heading(name: str | None, code: str) -> str:
    """노트북 소제목을 만듭니다.

    괄호 안의 영어 이름이 앵커가 됩니다. 한글만 있으면 앵커가 비어 목차 링크가 깨집니다.
    """
    if name is None:
        first = ast.parse(code).body[0]
        target = first.targets[0] if isinstance(first, ast.Assign) else first
        name = getattr(target, "name", None) or getattr(target, "id", "helpers")
    return f"{SECTION_TITLES.get(name, SECTION_TITLES[None])} ({name})"


def cli_function(name: str) -> str:
    """snippets/_cli.py의 함수 하나의 소스. 노트북이 저장소 없이도 실행되도록 그대로 넣습니다."""
    source = CLI.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
    return ast.get_source_segment(source, node)


def without_markers(source: str) -> str:
    """`# --8<-- [start:…]` 구역 표시 줄을 뺍니다. 페이지용 표시라 노트북에서는 잡음일 뿐입니다."""
    return "\n".join(line for line in source.splitlines() if not SECTION.match(line.strip())) + "\n"


def build_notebook(page: registry.Page, page_url: str, executed: bool = False) -> dict:
    """측정하는 페이지 하나의 스니펫 모듈로 nbformat 4 노트북(JSON 사전)을 만듭니다."""
    module = page.snippet_path
    source = module.read_text(encoding="utf-8")
    docstring, chunks = split_module(source)
    title = docstring.partition("\n")[0]
    where = (
        "사이트에 보이는 출력은 이 사이트를 빌드한 컴퓨터(GPU 없는 CPU)에서 실행한 결과라서, "
        "실행할 때마다 또 컴퓨터마다 숫자가 달라집니다."
        if executed
        else "이 사이트는 노트북을 실행하지 않고 빌드해서 출력이 없습니다. 내려받아 실행해 보세요."
    )
    # 제목에 모듈 이름을 붙여 앵커가 생기게 합니다. 한글만 있는 제목은 앵커가 비어, "본문으로
    # 건너뛰기" 링크가 깨집니다.
    intro = f"""
# {page.heading} 노트북 ({module.stem})

{title}

이 노트북은 저장소의 `snippets/{module.name}`에서 자동으로 만들어집니다. 사이트의
[{page.heading}]({page_url}) 페이지와 같은 코드입니다. GPU가 있으면 GPU에서, 없으면 CPU에서
실행합니다.

{where} 장치와 버전을 밝혀 측정한 값은 페이지의 "측정 결과"에 있습니다.

<a href="{module.stem}.ipynb" download>노트북 내려받기(.ipynb)</a>
"""
    cells = [
        markdown_cell(intro),
        markdown_cell(
            "## 설치 (install)\n\n먼저 필요한 꾸러미를 설치합니다. PyPI의 `torch`는 Linux에서 "
            "CUDA 빌드(수 GB)입니다. 다른 버전의 torch가 이미 있는 환경(Colab 등)에서는 이 셀이 "
            "사이트가 검증한 버전을 새로 받습니다."
        ),
        code_cell(install_cell([source, CLI.read_text(encoding="utf-8")])),
    ]
    if page.run_as_script:
        cells += [
            markdown_cell(
                "이 팁은 여러 프로세스를 띄웁니다. 노트북 안에서는 그 프로세스들이 노트북에 "
                "정의한 함수를 찾을 수 없으므로, 모듈을 파일로 쓴 다음 별도의 Python 프로세스로 "
                "실행합니다."
            ),
            code_cell(f"%%writefile {CLI.name}\n{CLI.read_text(encoding='utf-8')}"),
            code_cell(f"%%writefile {module.name}\n{without_markers(source)}"),
            code_cell(
                "import subprocess\nimport sys\n\n"
                f'result = subprocess.run([sys.executable, "{module.name}"], '
                "capture_output=True, text=True)\n"
                "print(result.stdout)\n"
                "assert result.returncode == 0, result.stderr[-2000:]"
            ),
        ]
    else:
        for name, code in chunks:
            cells += [markdown_cell(f"## {chunk_heading(name, code)}"), code_cell(code)]
        cells += [
            markdown_cell(
                "## 실행 (run)\n\n느린 방식과 빠른 방식을 비교합니다. GPU가 있으면 GPU에서, 없으면 "
                "CPU에서 실행합니다."
            ),
            code_cell(f"{cli_function('pick_device')}\n\n\nmain(pick_device())"),
        ]
    for number, cell in enumerate(cells):
        # nbformat은 셀마다 무작위 id를 줍니다. 빌드마다 같은 파일이 되게 차례로 씁니다.
        cell["id"] = f"cell-{number}"
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook = v4.new_notebook(
        cells=cells, metadata={"kernelspec": kernel, "language_info": {"name": "python"}}
    )
    nbformat.validate(notebook)  # 형식에 어긋나면 빌드가 여기서 멈춥니다
    return notebook


def write_if_changed(path: Path, text: str) -> None:
    # 내용이 같으면 다시 쓰지 않습니다. mkdocs-jupyter의 캐시와 파일 시각이 그대로 유지됩니다.
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def on_config(config):
    # mkdocs-jupyter는 실행한 노트북의 HTML을 기본으로 저장소 안 `.cache/mkdocs-jupyter/`에 캐시하고
    # 그대로 페이지에 넣습니다. git이 나르는 파일이 페이지가 되지 않게 저장소 밖에 둡니다(이슈 21).
    # 그 폴더를 만들 수 없으면(읽기 전용, 가득 참) 캐시 없이 빌드합니다: 그 플러그인은 멈춥니다.
    jupyter = config.plugins["mkdocs-jupyter"].config
    folder = cache.folder("mkdocs-jupyter")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(folder)
        jupyter["cache_dir"] = str(folder)
    except OSError:
        jupyter["cache"] = False
    return config


# mkdocs-jupyter의 on_files보다 먼저 실행되어야 그 플러그인이 이 노트북들을 페이지로 바꿉니다.
@event_priority(50)
def on_files(files, config):
    root = Path(config.config_file_path).parent
    out_dir = root / ".cache" / "notebooks"
    executed = bool(config.plugins["mkdocs-jupyter"].config["execute"])
    for page in registry.load():
        # 노트북은 notebooks/에, 페이지는 <구역>/에 있으므로 한 단계 위로 올라갑니다.
        page_url = "../" + page.doc.removesuffix(".md") + ".html"
        notebook = build_notebook(page, page_url, executed)
        text = nbformat.writes(notebook) + "\n"
        write_if_changed(out_dir / page.notebook, text)
        files.append(
            File(
                page.notebook,
                src_dir=str(out_dir),
                dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls,
            )
        )
    return files


def on_page_content(html: str, page, config, files) -> str:
    # 노트북 페이지의 코드는 팁 페이지에 이미 있습니다. 검색 색인에서 빼서 결과가 겹치지 않게 하고,
    # 모든 페이지가 처음 방문할 때 내려받는 색인 파일도 작게 유지합니다.
    if page.file.src_uri.endswith(".ipynb"):
        page.meta["search"] = {"exclude": True}
    return html


def on_post_page(output: str, page, config) -> str:
    """nbconvert 템플릿이 넣는 CDN 스크립트(mermaid, MathJax)를 지웁니다(P6: 외부 요청 없음)."""
    if page.file.src_uri.endswith(".ipynb"):
        return CDN_BLOCKS.sub("", output)
    return output
