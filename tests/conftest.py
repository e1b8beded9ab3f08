"""여러 테스트 파일이 함께 쓰는 준비물(fixture)입니다."""

import os

import pytest

from guide import registry
from tests import notebook_run
from tests.site_build import ROOT, mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """평소처럼(노트북 실행 없이) 빌드한 사이트 폴더입니다. 세션마다 한 번만 빌드합니다."""
    site_dir = tmp_path_factory.mktemp("site")
    result = mkdocs_build(ROOT, site_dir)
    assert result.returncode == 0, result.stderr
    return site_dir


@pytest.fixture(scope="session")
def notebook_process(built_site, tmp_path_factory):
    """사이트에서 내려받는 노트북을 모두 새 환경에서 실행하는 프로세스(tests/notebook_run.py)."""
    workdir = tmp_path_factory.mktemp("fresh-notebooks")
    notebooks = [built_site / "notebooks" / f"{page.snippet}.ipynb" for page in registry.load()]
    process = notebook_run.start(notebooks, workdir, workers=min(2, os.cpu_count() or 1))
    yield process, workdir
    notebook_run.stop(process)


def pytest_collection_modifyitems(items):
    # 노트북 테스트는 실행이 끝나기를 기다립니다. 맨 뒤에 두어, 낮은 우선순위로 도는 노트북 실행이
    # 다른 모든 테스트와 겹치게 합니다(tests/notebook_run.py의 NICENESS).
    items.sort(key=lambda item: "fresh_runs" in item.fixturenames)


def wanted(request, name: str) -> bool:
    # mutmut 아래에서는 사이트 빌드를 건너뛰므로(tests/site_build.py), 자동 준비물이 그것을 부르면
    # 모든 테스트가 건너뛰어집니다.
    if "MUTANT_UNDER_TEST" in os.environ:
        return False
    return any(name in item.fixturenames for item in request.session.items)


@pytest.fixture(scope="session", autouse=True)
def start_notebooks_early(request):
    """노트북 실행은 몇 분 걸리고 그동안 이 프로세스는 기다리기만 합니다. 노트북 테스트가 이번
    실행에 있으면 세션 처음에 띄워, 다른 테스트가 도는 동안 함께 돌게 합니다."""
    if wanted(request, "fresh_runs"):
        request.getfixturevalue("notebook_process")
