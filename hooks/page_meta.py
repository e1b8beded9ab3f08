"""페이지의 앞머리 `page: <id>`가 가리키는 레지스트리 페이지(여러 훅이 함께 씁니다)."""

from __future__ import annotations

from mkdocs.exceptions import PluginError

from guide import registry


def measured_page(page) -> registry.Page | None:
    page_id = page.meta.get("page")
    if not page_id:
        return None
    try:
        return registry.by_id(str(page_id))
    except registry.RegistryError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None
