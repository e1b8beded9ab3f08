"""측정하는 페이지의 목록(`guide/pages.toml`)을 읽습니다.

훅, 벤치마크, 테스트가 모두 여기서 페이지 목록과 한국어 이름을 가져옵니다. 다른 곳에는 팁의
목록이나 개수를 적지 않습니다.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Path(__file__).with_name("pages.toml")

SECTIONS = {
    "tips": "7가지 팁",
    "capstone": "전부 합치면",
    "beyond": "더 나아가기",
    "doctor": "진단",
}
REQUIRES = ("any", "cuda", "multi-gpu")
CONCLUSIONS = (
    "speedup",
    "leave-one-out",
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
    ceiling_label: str = "천장 대비"
    note: str = ""  # 결론 뒤에 붙는 한 문장(예: 이 배수가 무엇의 크기인지)
    report_title: str = ""  # 결과에 붙은 캡처(보고서, 프로파일 표)의 제목. 없으면 "<변형>의 보고서"
    saving_param: str = ""  # 아낀 시간을 이 params 값 하나당으로도 씁니다(예: epochs)
    saving_unit: str = ""  # 그 단위의 한국어 이름(예: 에폭)
    # 벤치마크 모듈 없이 레지스트리만으로 재는 묶음(benchmarks/bench_registry.py)의 함수 이름들.
    inputs: str = ""  # inputs(device, **sizes[크기]) → 두 함수에 넘길 인자
    sizes: dict = field(default_factory=dict)  # {"quick": {...}, "cpu": {...}, "cuda": {...}}
    baseline: str = ""  # 기준 함수(변형 key와 같은 이름)
    recommended: str = ""  # 권장 방식 함수


@dataclass(frozen=True)
class Sweep:
    """크기를 바꿔 가며 잰 비교: x축(매개변수 이름)에 따른 기준 대비 변형의 속도와 구간."""

    key: str
    title: str
    x: str  # params에서 x 값이 든 이름(예: d_model)
    x_label: str  # 축과 문장에 쓰는 한국어 이름(예: "폭(d_model)")
    baseline: str  # 변형 key(guide/pages.toml의 variants)
    variant: str
    requires: str = "any"  # any | cuda: CUDA에서만 뜻이 있는 스윕은 CPU에서 "해당 없음"
    not_applicable: str = ""
    memory: bool = False  # 메모리 곡선도 그릴지(체크포인팅 등)


@dataclass(frozen=True)
class BreakEven:
    """한 번 치르는 비용이 있는 기법: 비용, 스텝마다 아끼는 시간, 본전까지의 스텝 수."""

    label: str
    cost: str  # 한 번의 비용(초)이 든 항목의 key
    cost_metric: str  # 그 항목의 지표 이름(예: compile_s). "median_s"면 그 항목의 중앙값
    baseline: str  # 스텝 하나의 시간을 비교할 기준 항목의 key
    variant: str  # 기법을 쓴 항목의 key
    subtract: str = ""  # 비용에서 뺄 항목(예: 컴파일하지 않은 첫 호출)의 key(같은 지표를 뺍니다)
    unit: str = "스텝"  # 본전까지 세는 단위
    per_param: str = ""  # 호출 한 번이 이 params 값만큼의 단위일 때(예: steps, batches)


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
    sweeps: dict[str, Sweep] = field(default_factory=dict)
    breakeven: tuple[BreakEven, ...] = ()
    # 메커니즘이 CUDA에만 있는 변형(전부 합치면의 TF32 단계 등): 다른 장치에서는 "바뀌는 것 없음"
    cuda_only: tuple[str, ...] = ()

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

    def sweep(self, key: str) -> Sweep:
        try:
            return self.sweeps[key]
        except KeyError:
            raise RegistryError(f"{self.id}: 스윕 {key!r}이 pages.toml에 없습니다") from None

    def group_title(self, key: str, params: dict) -> str:
        return fill(self.group(key).title, params)

    def group_name(self, key: str) -> str:
        return name_without_values(self.group(key).title)

    def group_work(self, key: str, params: dict) -> str:
        return fill(self.group(key).work, params)


def name_without_values(title: str) -> str:
    """값 없이 부르는 이름(묶음, 스윕): `{자리}`가 있으면 그 앞의 ':'이나 '(' 앞까지만 씁니다."""
    if "{" not in title:
        return title
    head = re.split(r"\s*[:(]", title, maxsplit=1)[0]
    # `{자리}`와 바로 뒤의 영문 단위(ms, GiB 등)를 함께 뺍니다.
    return re.sub(r"\s*\S*\{\w+\}\S*(\s+[A-Za-z]+\b)?", "", head).strip() or head


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


def _parse_page(raw: dict) -> Page:
    where = raw.get("id", "?")
    groups = {
        key: Group(
            key,
            spec["title"],
            spec["work"],
            spec.get("conclusion", "speedup"),
            spec.get("ceiling_label", "천장 대비"),
            spec.get("note", ""),
            spec.get("report_title", ""),
            spec.get("saving_param", ""),
            spec.get("saving_unit", ""),
            spec.get("inputs", ""),
            dict(spec.get("sizes", {})),
            spec.get("baseline", ""),
            spec.get("recommended", ""),
        )
        for key, spec in raw.pop("groups", {}).items()
    }
    for group in groups.values():
        if group.conclusion not in CONCLUSIONS:
            raise RegistryError(f"{where}: 묶음 {group.key}의 conclusion {group.conclusion!r}")
        if group.inputs and not (group.baseline and group.recommended and group.sizes):
            raise RegistryError(f"{where}: 묶음 {group.key}에 inputs가 있으면 baseline, "
                                "recommended, sizes도 필요합니다")  # fmt: skip
    sweeps = {key: Sweep(key, **spec) for key, spec in raw.pop("sweeps", {}).items()}
    for sweep in sweeps.values():
        if sweep.requires not in ("any", "cuda") or {sweep.baseline, sweep.variant} - set(
            raw.get("variants", {})
        ):
            raise RegistryError(
                f"{where}: 스윕 {sweep.key}의 requires 또는 변형 이름이 잘못되었습니다"
            )
    raw["sweeps"] = sweeps
    raw["breakeven"] = tuple(BreakEven(**item) for item in raw.pop("breakeven", ()))
    raw["gpu_sections"] = tuple(raw.get("gpu_sections", ()))
    raw["cuda_only"] = tuple(raw.get("cuda_only", ()))
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
        pages = tuple(_parse_page(dict(raw)) for raw in tomllib.load(handle)["page"])
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
