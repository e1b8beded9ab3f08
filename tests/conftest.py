"""여러 테스트 파일이 함께 쓰는 준비물(fixture)입니다."""

import pytest

from tests.site_build import ROOT, mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """평소처럼(노트북 실행 없이) 빌드한 사이트 폴더입니다. 세션마다 한 번만 빌드합니다."""
    site_dir = tmp_path_factory.mktemp("site")
    result = mkdocs_build(ROOT, site_dir)
    assert result.returncode == 0, result.stderr
    return site_dir
