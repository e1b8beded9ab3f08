"""여러 테스트 파일이 함께 쓰는 준비물(fixture)입니다."""

import os

import pytest

from guide import registry
from tests import background, notebook_run, site_scan
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
    background.stop(process)


@pytest.fixture(scope="session")
def scan_process(built_site, tmp_path_factory):
    """빌드한 사이트의 모든 페이지를 브라우저로 검사하는 프로세스(tests/site_scan.py)."""
    workdir = tmp_path_factory.mktemp("site-scan")
    process = site_scan.start(built_site, workdir)
    yield process, workdir
    background.stop(process)


# 세션 처음에 띄워 남는 CPU로 돌리는 일(tests/background.py)과, 그 결과를 받는 준비물
BACKGROUND = {"fresh_runs": "notebook_process", "findings": "scan_process"}


def waits_for_background(item) -> bool:
    return any(name in item.fixturenames for name in BACKGROUND)


# 프로세스를 여럿 띄워 두 코어를 다 쓰는 테스트 파일. 세션 앞쪽에서는 배경 일과 코어를 다퉈
# 혼자일 때보다 몇 배 느리므로(발행 테스트 36초 → 174초), 배경 일이 대개 끝난 뒤쪽에 둡니다.
USES_EVERY_CORE = {"test_benchmark_plugin.py", "test_beyond_compile.py"}


def session_order(item) -> tuple[bool, bool]:
    return waits_for_background(item), item.path.name in USES_EVERY_CORE


def pytest_collection_modifyitems(items):
    # 결과를 기다리는 테스트를 맨 뒤에 두어, 남는 CPU로 도는 일이 다른 모든 테스트와 겹치게 합니다.
    items.sort(key=session_order)


def wanted(request, name: str) -> bool:
    # mutmut 아래에서는 사이트 빌드를 건너뛰므로(tests/site_build.py), 자동 준비물이 그것을 부르면
    # 모든 테스트가 건너뛰어집니다.
    if "MUTANT_UNDER_TEST" in os.environ:
        return False
    return any(name in item.fixturenames for item in request.session.items)


@pytest.fixture(scope="session", autouse=True)
def start_background_work_early(request):
    """노트북 실행과 브라우저 검사는 몇 분씩 걸리고 그동안 이 프로세스는 기다리기만 합니다. 그
    결과를 보는 테스트가 이번 실행에 있으면 세션 처음에 띄워, 다른 테스트가 도는 동안 함께 돌게
    합니다. 브라우저가 없으면 검사를 띄우지 않습니다(접근성 테스트가 그 이유를 말합니다)."""
    for consumer, process in BACKGROUND.items():
        if process == "scan_process" and site_scan.missing_reason():
            continue
        if wanted(request, consumer):
            request.getfixturevalue(process)
