"""내려받은 노트북의 첫 코드 셀: 노트북의 코드가 import하는 바깥 꾸러미를 저장소가 고정한 버전으로
설치합니다(`%pip install`). 고정되지 않은 꾸러미를 import하면 빌드가 멈춥니다.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys

from mkdocs.exceptions import PluginError

from guide import registry

# 고정한 버전: 간접 의존성까지는 constraints.txt, 잠금에서 빠진 torch는 requirements.txt에 있습니다.
PIN_FILES = (registry.ROOT / "constraints.txt", registry.ROOT / "requirements.txt")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", re.M)
# torch의 `.numpy()`와 `torch.from_numpy()`는 numpy를 import하지 않아도 numpy가 있어야 동작합니다.
NUMPY_BRIDGE = {"numpy", "from_numpy"}


def normalize(name: str) -> str:
    """꾸러미 이름을 PEP 503 방식으로 맞춥니다(pytorch_lightning == pytorch-lightning)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_versions() -> dict[str, str]:
    """저장소가 고정한 {꾸러미 이름: 버전}입니다."""
    pins: dict[str, str] = {}
    for path in PIN_FILES:
        for name, version in PIN.findall(path.read_text(encoding="utf-8")):
            pins.setdefault(normalize(name), version)
    return pins


# 같은 코드면 같은 답이므로 기억해 둡니다. `mkdocs serve`는 다시 빌드할 때마다 노트북 20개를 새로
# 만드는데, 구문 분석이 그 시간의 2/3였습니다. 훅 파일과 달리 이 모듈은 한 번만 import됩니다.
@functools.lru_cache(maxsize=256)
def third_party_imports(source: str) -> frozenset[str]:
    """코드를 실행하면 바로 import되는 바깥 꾸러미(맨 위 수준의 import)의 최상위 이름입니다.

    함수 안의 import(GPU에서만 쓰는 torchao, 일부러 실패하는 2020년 코드)는 그 함수를 부를 때만
    필요하므로 넣지 않습니다. 표준 라이브러리와 `_cli`(노트북에 들어 있음)도 뺍니다.
    """
    tree = ast.parse(source)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    if any(isinstance(n, ast.Attribute) and n.attr in NUMPY_BRIDGE for n in ast.walk(tree)):
        names.add("numpy")
    return frozenset(n for n in names if n not in sys.stdlib_module_names and n != "_cli")


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def install_cell(sources: list[str]) -> str:
    """노트북의 코드(스니펫과 _cli.py)가 import하는 꾸러미를 고정한 버전으로 설치하는 셀입니다."""
    pins = pinned_versions()
    modules = set().union(*(third_party_imports(source) for source in sources))
    packages = set()
    for module in sorted(modules):
        for dist in _distributions().get(module, [module]):
            if normalize(dist) not in pins:
                raise PluginError(
                    f"노트북이 import하는 {module}({dist})의 버전이 constraints.txt와 "
                    "requirements.txt 어디에도 고정되어 있지 않습니다"
                )
            packages.add(f"{normalize(dist)}=={pins[normalize(dist)]}")
    return (
        "# 이 노트북의 코드가 import하는 꾸러미를 이 사이트가 검증한 버전으로 설치합니다.\n"
        "# 이미 같은 버전이 있으면 건너뜁니다. 설치한 뒤에는 커널을 다시 시작하세요.\n"
        f"%pip install --quiet {' '.join(sorted(packages))}"
    )
