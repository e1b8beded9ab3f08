"""빌드 시점 렌더링: `results/*.json`의 측정 결과를 페이지에 그립니다(절대 측정하지 않습니다).

표시 자리:
- `<!-- results -->`: 측정하는 페이지(앞머리 `page: <id>`). 장치마다 표, 결론, 차트, 측정 환경.
- `<!-- results: overview -->`: 홈의 개요.  `<!-- results: all -->`: 전체 결과 페이지.

읽기·검증은 hooks/results_data.py, 그리기는 hooks/render.py(자동 이스케이프 템플릿)가 합니다.
결과 파일에 문제가 있으면 파일과 항목을 짚은 한국어 오류 하나로 빌드를 멈춥니다.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from benchmarks import analysis, results_file
from guide import registry
from hooks import render
from hooks.results_data import gpu_verified, load_devices

log = logging.getLogger("mkdocs.hooks.results")

MARKER = re.compile(r"^<!--\s*results(?::\s*(?P<target>overview|all))?\s*-->[ \t]*$", re.M)


def _root(config) -> Path:
    return Path(config["config_file_path"]).parent


def _devices(config):
    try:
        return load_devices(_root(config))
    except results_file.ResultsError as error:
        raise PluginError(str(error)) from None


def on_files(files, config):
    """원본 결과 파일을 사이트에 그대로 복사해 페이지에서 내려받을 수 있게 합니다."""
    for device in _devices(config):
        uri = f"results/{device.path.name}"
        files.append(File.generated(config, uri, abs_src_path=str(device.path)))
    return files


def on_serve(server, config, builder):
    # results/가 없어도 `mkdocs serve`가 뜨도록 mkdocs.yml의 watch가 아니라 여기서 지켜봅니다.
    folder = _root(config) / "results"
    if folder.is_dir():
        server.watch(str(folder))
    return server


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not MARKER.search(markdown):
        return markdown
    devices = _devices(config)

    def url(doc: str) -> str:
        found = files.get_file_from_path(doc)
        target = found.url if found else doc
        return get_relative_url(target, page.file.url)

    def replace(match: re.Match[str]) -> str:
        target = match["target"]
        if target == "overview":
            verified = [p for p in registry.load() if p.gpu_sections and gpu_verified(devices, p)]
            return render.overview(devices, verified, url)
        if target == "all":
            return render.all_results(devices, url)
        page_id = page.meta.get("page")
        if not page_id:
            raise PluginError(
                f"{page.file.src_uri}: `<!-- results -->`에는 앞머리 `page:`가 필요합니다"
            )
        try:
            measured = registry.by_id(str(page_id))
        except registry.RegistryError as error:
            raise PluginError(f"{page.file.src_uri}: {error}") from None
        # 결과 파일이 하나도 없으면(새로 받은 저장소) 어느 페이지나 "측정 결과 없음"이 정상입니다.
        if devices and not any(page_id in analysis.measured_pages(d.doc) for d in devices):
            log.warning(f"{page.file.src_uri}: {page_id}의 측정 결과가 results/에 없습니다")
        return render.page_results(measured, devices, gpu_verified(devices, measured), url)

    return MARKER.sub(replace, markdown)


def on_env(env, config, files):
    # 모든 페이지를 그린 뒤: 레지스트리에 있지만 결과 표시 자리가 없는 페이지를 알립니다.
    for page in registry.load():
        found = files.get_file_from_path(page.doc)
        if found is None:
            log.warning(f"guide/pages.toml의 {page.id}: 페이지 docs/{page.doc}이(가) 없습니다")
        elif not MARKER.search(found.content_string):
            log.warning(f"docs/{page.doc}: 결과를 그릴 `<!-- results -->` 자리가 없습니다")
    return env
