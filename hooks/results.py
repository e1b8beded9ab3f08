"""빌드 시점 렌더링: `results/*.json`의 측정 결과를 페이지에 그립니다(절대 측정하지 않습니다).

결과에 관한 것은 모두 이 훅이 맡습니다.
- `<!-- results -->`: 측정하는 페이지(앞머리 `page: <id>`). 장치마다 표, 결론, 차트, 스윕, 본전.
- `<!-- results: overview -->`: 홈의 개요.  `<!-- results: all -->`: 전체 결과 페이지.
- `<!-- results: peaks -->`: GPU마다 공개된 최고 성능 표(guide/peaks.toml).
- GPU에서 동작이 달라지는 구역(`gpu_sections`)을 끼워 넣는 코드 블록에는, 지금 코드 그대로를
  CUDA에서 잰 결과가 없으면 GPU 경로를 아직 GPU에서 돌려 보지 않았다는 표시(GPU_MARK)를 붙입니다.
- 원본 결과 파일을 사이트에 복사해 내려받을 수 있게 합니다.
결과는 빌드마다 한 번 읽고 분석합니다(hooks/results_data.py). 문제가 있으면 파일과 항목을 짚은
한국어 오류 하나로 빌드를 멈춥니다.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from markupsafe import Markup
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guide import registry
from hooks import chart_images, overview, render
from hooks.page_meta import measured_page
from hooks.results_data import (
    folded_devices,
    gpu_verified,
    home_devices,
    load_devices,
    page_devices,
)
from results_format.validation import ResultsError

log = logging.getLogger("mkdocs.hooks.results")

MARKER = re.compile(r"^<!--\s*results(?::\s*(?P<target>overview|all|peaks))?\s*-->[ \t]*$", re.M)
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
GPU_MARK = (
    '<span class="gpu-unverified-mark">GPU 경로는 아직 GPU에서 돌려 보지 않았습니다'
    "(CPU에서는 테스트가 실행합니다)</span>"
)


def _root(config) -> Path:
    return Path(config["config_file_path"]).parent


def _devices(config):
    try:
        return load_devices(_root(config))
    except ResultsError as error:
        raise PluginError(str(error)) from None


def on_files(files, config):
    """원본 결과 파일을 사이트에 그대로 복사해 페이지에서 내려받을 수 있게 합니다."""
    for device in _devices(config):
        uri = f"results/{device.path.name}"
        files.append(File.generated(config, uri, content=device.path.read_bytes()))
    return files


def on_serve(server, config, builder):
    # results/가 없어도 `mkdocs serve`가 뜨도록 mkdocs.yml의 watch가 아니라 여기서 지켜봅니다.
    folder = _root(config) / "results"
    if folder.is_dir():
        server.watch(str(folder))
    return server


def mark_gpu_blocks(markdown: str, measured: registry.Page) -> str:
    sections = "|".join(re.escape(name) for name in measured.gpu_sections)
    include = re.compile(rf'--8<-- "snippets/{re.escape(measured.snippet)}\.py:(?:{sections})"')

    def mark(fence: re.Match[str]) -> str:
        if not include.search(fence["body"]):
            return fence[0]
        return f"{fence['indent']}{GPU_MARK}\n\n{fence[0]}"

    return FENCE.sub(mark, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    measured = measured_page(page)
    has_marker = MARKER.search(markdown)
    if not has_marker and not (measured and measured.gpu_sections):
        return markdown
    devices = _devices(config)
    if measured and measured.gpu_sections and not gpu_verified(devices, measured):
        markdown = mark_gpu_blocks(markdown, measured)

    def url(doc: str) -> str:
        found = files.get_file_from_path(doc)
        return get_relative_url(found.url if found else doc, page.file.url)

    def chart(svg: str) -> Markup:
        return chart_images.embed(svg, Path(config.site_dir), url)

    def replace(match: re.Match[str]) -> str:
        target = match["target"]
        if target == "overview":
            verified = [p for p in registry.load() if p.gpu_sections and gpu_verified(devices, p)]
            return overview.overview(home_devices(devices), verified, url, chart)
        if target == "all":
            return overview.all_results(devices, url)
        if target == "peaks":
            return overview.peaks_table(devices)
        if measured is None:
            raise PluginError(
                f"{page.file.src_uri}: `<!-- results -->`에는 앞머리 `page:`가 필요합니다"
            )
        verified = gpu_verified(devices, measured)
        shown = page_devices(devices, measured)
        folded = folded_devices(shown, devices)
        return render.page_results(measured, shown, verified, url, chart, folded)

    return MARKER.sub(replace, markdown)


def on_env(env, config, files):
    # 모든 페이지를 그린 뒤: 레지스트리에 있지만 결과 표시 자리가 없는 페이지를 알립니다.
    for page in registry.load():
        found = files.get_file_from_path(page.doc)
        if found is None:
            log.warning(f"guide/pages.toml의 {page.id}: 페이지 docs/{page.doc}이 없습니다")
        elif not MARKER.search(found.content_string):
            log.warning(f"docs/{page.doc}: 결과를 그릴 `<!-- results -->` 자리가 없습니다")
    return env
