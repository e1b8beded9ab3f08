"""측정하는 페이지의 목록(`guide/pages.toml`)을 읽습니다.

훅, 벤치마크, 테스트가 모두 여기서 페이지 목록과 한국어 이름을 가져옵니다. 다른 곳에는 팁의
목록이나 개수를 적지 않습니다.
"""

from __future__ import annotations

import functools
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Path(__file__).with_name("pages.toml")

SECTIONS = {
    "tips": "7가지 팁",
    "capstone": "전부 합치면",
    "beyond": "더 나아가기",
}
REQUIRES = ("any", "cuda", "multi-gpu")
CONCLUSIONS = (
    "speedup",
    "saturation",
    "bf16-isa",
    "overhead",
    "ceiling",
    "waterfall",
    "tradeoff",
    "compile-time",
)


class RegistryError(ValueError):
    """pages.toml이 잘못되었을 때 페이지와 필드를 짚어 알려 줍니다."""


@dataclass(frozen=True)
class Group:
    key: str
    title: str
    work: str
    conclusion: str
    ceiling_label: str = "천장 대비"  # 전부 합치면은 "MFU"(모델 FLOPs 활용률)


@dataclass(frozen=True)
class Page:
    id: str
    section: str
    number: int
    slug: str
    title: str
    summary: str
    compares: str
    snippet: str
    benchmark: str
    requires: str
    not_applicable: str = ""
    gpu_sections: tuple[str, ...] = ()
    overview: tuple[dict, ...] = ()
    run_as_script: bool = False  # 프로세스를 띄우는 모듈: 노트북이 파일로 쓴 뒤 실행합니다
    groups: dict[str, Group] = field(default_factory=dict)
    variants: dict[str, str] = field(default_factory=dict)

    @property
    def heading(self) -> str:
        """H1과 메뉴에 쓰는 제목: "팁 1: …", "더 나아가기 3: …", 전부 합치면은 제목만."""
        if self.section == "tips":
            return f"팁 {self.number}: {self.title}"
        return self.title

    @property
    def doc(self) -> str:
        """docs/ 기준 페이지 경로."""
        return f"{self.section}/{self.number:02d}-{self.slug}.md"

    @property
    def snippet_path(self) -> Path:
        return ROOT / "snippets" / f"{self.snippet}.py"

    @property
    def benchmark_path(self) -> Path:
        return ROOT / "benchmarks" / f"{self.benchmark}.py"

    @property
    def notebook(self) -> str:
        return f"notebooks/{self.snippet}.ipynb"

    def applies_to(self, device_kind: str, device_count: int) -> bool:
        """이 페이지의 메커니즘이 그 장치에 있는지: 없으면 "해당 없음"으로 보여 줍니다."""
        if self.requires == "cuda":
            return device_kind == "cuda"
        if self.requires == "multi-gpu":
            return device_kind == "cuda" and device_count >= 2
        return True

    def group(self, key: str) -> Group:
        try:
            return self.groups[key]
        except KeyError:
            raise RegistryError(f"{self.id}: 묶음 {key!r}이(가) pages.toml에 없습니다") from None

    def variant_label(self, key: str, params: dict) -> str:
        try:
            template = self.variants[key]
        except KeyError:
            raise RegistryError(f"{self.id}: 변형 {key!r}이(가) pages.toml에 없습니다") from None
        return fill(template, params)

    def group_title(self, key: str, params: dict) -> str:
        return fill(self.group(key).title, params)

    def group_name(self, key: str) -> str:
        """값 없이 부르는 묶음 이름: 제목에서 `{자리}`가 든 괄호를 뺀 것입니다."""
        title = re.sub(r"\s*\([^()]*\{\w+\}[^()]*\)", "", self.group(key).title)
        return re.sub(r"\s*\{\w+\}\S*", "", title).strip()

    def group_work(self, key: str, params: dict) -> str:
        return fill(self.group(key).work, params)


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def fill(template: str, params: dict) -> str:
    """`{이름}`을 결과의 params 값으로 채웁니다. 값이 없으면 이름 그대로 둡니다(깨지지 않게)."""

    def value(match: re.Match[str]) -> str:
        found = params.get(match[1])
        if found is None:
            return match[0]
        if isinstance(found, float) and not found.is_integer():
            return f"{found:.3g}"
        return f"{int(found):,}" if isinstance(found, int | float) else str(found)

    return re.sub(r"\{(\w+)\}", value, template)


def _page(raw: dict) -> Page:
    where = raw.get("id", "?")
    groups = {
        key: Group(
            key,
            spec["title"],
            spec["work"],
            spec.get("conclusion", "speedup"),
            spec.get("ceiling_label", "천장 대비"),
        )
        for key, spec in raw.pop("groups", {}).items()
    }
    for group in groups.values():
        if group.conclusion not in CONCLUSIONS:
            raise RegistryError(f"{where}: 묶음 {group.key}의 conclusion {group.conclusion!r}")
    raw["gpu_sections"] = tuple(raw.get("gpu_sections", ()))
    raw["overview"] = tuple(raw.get("overview", ()))
    try:
        page = Page(groups=groups, variants=dict(raw.pop("variants", {})), **raw)
    except TypeError as error:
        raise RegistryError(f"{where}: {error}") from None
    if page.section not in SECTIONS or page.requires not in REQUIRES:
        raise RegistryError(f"{where}: section 또는 requires 값이 잘못되었습니다")
    if page.requires != "any" and not page.not_applicable:
        raise RegistryError(f"{where}: requires가 any가 아니면 not_applicable 이유가 필요합니다")
    for item in page.overview:
        page.group(item["group"])
    return page


@functools.cache
def load(path: Path = REGISTRY) -> tuple[Page, ...]:
    with open(path, "rb") as handle:
        pages = tuple(_page(dict(raw)) for raw in tomllib.load(handle)["page"])
    ids = [page.id for page in pages]
    if len(set(ids)) != len(ids):
        raise RegistryError("pages.toml: 같은 id가 두 번 나옵니다")
    order = {name: index for index, name in enumerate(SECTIONS)}
    return tuple(sorted(pages, key=lambda page: (order[page.section], page.number)))


def pages(section: str | None = None) -> list[Page]:
    return [page for page in load() if section is None or page.section == section]


def by_id(page_id: str) -> Page:
    for page in load():
        if page.id == page_id:
            return page
    raise RegistryError(f"pages.toml에 {page_id!r} 페이지가 없습니다")


def by_snippet(snippet: str) -> Page | None:
    return next((page for page in load() if page.snippet == snippet), None)


def by_benchmark(benchmark: str) -> Page | None:
    return next((page for page in load() if page.benchmark == benchmark), None)
