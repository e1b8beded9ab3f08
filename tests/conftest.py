"""여러 테스트 파일이 함께 쓰는 준비물(fixture)과, 빠른 묶음만 돌았을 때 나머지 묶음을
알리는 줄입니다.

테스트 묶음(pyproject.toml의 markers): 표시가 없는 테스트가 평소 `pytest`의 빠른 묶음이고,
`browser`(Chromium과 axe), `notebooks`(새 환경에서 노트북 실행), `slow`(여러 프로세스, 처음부터
하는 Inductor 컴파일)는 README의 테스트 명령(`-m ""`)과 CI가 함께 돌립니다.
"""

import pytest
from filelock import FileLock

from tests.site_build import ROOT, mkdocs_build

HEAVY_TIERS = ("browser", "notebooks", "slow")
DEFAULT_SELECTION = "not browser and not notebooks and not slow"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, worker_id):
    """평소처럼(노트북 실행 없이) 빌드한 사이트 폴더입니다. 한 번만 빌드합니다.

    pytest-xdist의 작업자들은 pytest-xdist 문서의 방법대로 빌드 하나를 나눠 씁니다: 모든 작업자가
    보는 상위 임시 폴더에 처음 온 작업자가 잠금(FileLock)을 잡고 빌드하고, 나머지는 기다렸다가
    그 폴더를 씁니다.
    """
    if worker_id == "master":
        return build_into(tmp_path_factory.mktemp("site"))
    shared = tmp_path_factory.getbasetemp().parent
    site_dir = shared / "site"
    with FileLock(str(shared / "site.lock")):
        if not (site_dir / "index.html").is_file():
            build_into(site_dir)
    return site_dir


def build_into(site_dir):
    result = mkdocs_build(ROOT, site_dir)
    assert result.returncode == 0, result.stderr
    return site_dir


def pytest_terminal_summary(terminalreporter, config):
    if config.getoption("markexpr") != DEFAULT_SELECTION:
        return
    terminalreporter.write_line(
        f"빠른 묶음만 실행했습니다. 나머지 묶음({', '.join(HEAVY_TIERS)})은 "
        '`python -m pytest -m browser`처럼 하나씩, 모두는 `python -m pytest -m ""`로 실행합니다'
        '(README의 테스트 명령, CONTRIBUTING의 "테스트 묶음").'
    )
