"""레지스트리만으로 재는 페이지의 벤치마크: 벤치마크 모듈을 따로 쓰지 않는 단순한 페이지용입니다.

guide/pages.toml에서 `benchmark = "bench_registry"`인 페이지의 묶음 가운데 `inputs`, `sizes`,
`baseline`, `recommended`가 있는 것을, 스니펫의 그 이름의 함수로 잽니다: 입력 함수가 장치와 크기로
인자를 만들고, 두 함수에 같은 인자를 넘깁니다. 천장이나 메모리 말고 더 재야 하는 페이지는 자기
벤치마크 모듈(benchmarks/bench_<이름>.py)을 씁니다(CONTRIBUTING의 "측정하는 페이지 더하기").
"""

import importlib

import pytest

from guide import registry

CASES = [
    pytest.param(page.id, key, marks=pytest.mark.measures(key), id=f"{page.id}-{key}")
    for page in registry.load()
    if page.benchmark == "bench_registry"
    for key, group in page.groups.items()
    if group.inputs
]


@pytest.mark.parametrize(("page", "group"), CASES)
def test_registered_group(compare, bench_device, size_key, page, group):
    spec = registry.by_id(page).group(group)
    snippet = importlib.import_module(f"snippets.{registry.by_id(page).snippet}")
    sizes = spec.sizes[size_key]
    run = compare(group, params=sizes)
    for role, name in (("baseline", spec.baseline), ("recommended", spec.recommended)):
        # 변형마다 새 인자를 만듭니다: 한쪽이 바꾼 상태(변화도, 옵티마이저)가 다른 쪽에 섞이지 않게.
        args = getattr(snippet, spec.inputs)(bench_device, **sizes)
        run.add(name, getattr(snippet, name), *args, role=role)
    run.run()
