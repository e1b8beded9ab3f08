"""CONTRIBUTING.md의 "측정하는 페이지 더하기"를 적힌 순서대로 따라 해 봅니다.

그 절의 예시 파일 네 개(레지스트리 항목, 스니펫, 테스트, 페이지)를 저장소 복사본에 그대로 더하고,
측정하기 전에 테스트와 `mkdocs build --strict`가 통과하는지, 그 페이지 하나만 재서 발행하면 결과
파일에서 그 페이지의 부분만 생기는지 확인합니다. 안내가 코드와 어긋나면 이 테스트가 실패합니다.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from tests.site_build import ROOT, copy_project, mkdocs_build

GUIDE = ROOT / "CONTRIBUTING.md"
# 목록 안에 들여쓴 펜스 가운데 title이 있는 것(파일 경로 또는 "guide/pages.toml에 더할 항목").
BLOCK = re.compile(
    r'^(?P<indent> *)(?P<fence>`{3,})\w+ title="(?P<title>[^"]+)"\n'
    r"(?P<body>.*?)^(?P=indent)(?P=fence)$",
    re.M | re.S,
)


def example_files() -> dict[str, str]:
    section = GUIDE.read_text(encoding="utf-8").split("## 측정하는 페이지 더하기", 1)[1]
    section = section.split("\n## ", 1)[0]
    return {m["title"]: textwrap.dedent(m["body"]) for m in BLOCK.finditer(section)}


def test_the_guide_adds_a_page_in_four_files_and_under_200_lines():
    files = example_files()
    assert set(files) == {
        "guide/pages.toml에 더할 항목",
        "snippets/beyond_zero_grad.py",
        "tests/test_beyond_zero_grad.py",
        "docs/beyond/14-zero-grad.md",
    }
    assert sum(len(text.splitlines()) for text in files.values()) <= 200


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """예시 파일을 더한 저장소 복사본. 편집 가능한 설치가 이 저장소를 가리키므로 PYTHONPATH로
    복사본의 패키지(guide, benchmarks, hooks, snippets)를 먼저 읽게 합니다."""
    project = copy_project(tmp_path_factory.mktemp("contributing") / "project")
    for name in ("conftest.py", "pyproject.toml", "constraints.txt", "requirements.txt"):
        (project / name).write_bytes((ROOT / name).read_bytes())
    for title, text in example_files().items():
        if title.startswith("guide/pages.toml"):
            registry = project / "guide" / "pages.toml"
            registry.write_text(registry.read_text(encoding="utf-8") + "\n" + text, "utf-8")
        else:
            (project / title).write_text(text, encoding="utf-8")
    return project


def step_5_fast_checks() -> list[str]:
    """5단계의 첫 명령(`.venv/bin/python -m pytest -n0 tests/test_beyond_zero_grad.py …`)의 인자."""
    import shlex

    section = GUIDE.read_text(encoding="utf-8").split("5. **확인**", 1)[1].split("6. **", 1)[0]
    line = next(x.strip() for x in section.splitlines() if "tests/test_beyond_zero_grad.py" in x)
    return shlex.split(line)[1:]  # 맨 앞의 `.venv/bin/python`을 뺍니다


def run(project, *args, timeout=600):
    env = {**os.environ, "PYTHONPATH": str(project), "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, *args]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


@pytest.mark.slow  # pytest와 측정을 다른 프로세스로 돌리고 사이트를 빌드합니다
@pytest.mark.timeout(900)
def test_steps_5_and_6_pass_before_measuring_and_publish_only_that_page(project, tmp_path):
    # 5단계: 안내가 적은 빠른 검사(새 페이지의 테스트, 레지스트리 검사, 스니펫 규칙, 그 페이지만
    # 재는 벤치마크)를 글자 그대로 돌리면 측정 없이 통과합니다.
    checks = step_5_fast_checks()
    assert "tests/test_registry.py" in checks and "tests/test_beyond_zero_grad.py" in checks
    result = run(project, *checks, "-p", "no:cacheprovider")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    site = tmp_path / "site"
    built = mkdocs_build(project, site, PYTHONPATH=str(project))
    assert built.returncode == 0, built.stderr[-3000:]
    page = (site / "beyond" / "14-zero-grad.html").read_text(encoding="utf-8")
    assert "아직 재지 않음" in page or not list((project / "results").glob("*.json"))
    # 페이지가 보여 주는 재는 명령은 6단계의 명령처럼 이 페이지만 고릅니다(-k).
    assert "bench_registry.py -k zero-grad --benchmark --publish" in page
    # 6단계: 그 페이지만 재서 발행하면 결과 파일에 그 페이지만 생기고, 다른 페이지는 그대로입니다.
    before = {p.name: json.loads(p.read_text()) for p in (project / "results").glob("*.json")}
    published = run(project, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "benchmarks/bench_registry.py", "-k", "zero-grad", "--benchmark", "--publish",
                    "--budget", "0.3", "--benchmark-quiet")  # fmt: skip
    assert published.returncode == 0, published.stdout[-3000:] + published.stderr[-2000:]
    # 이 컴퓨터가 발행된 파일과 다른 CPU라면 그 장치의 새 파일이 생기고, 있던 파일은 그대로입니다.
    after = {p.name: json.loads(p.read_text()) for p in (project / "results").glob("*.json")}
    [name] = [name for name, doc in after.items() if "zero-grad" in doc["pages"]]
    assert {k: v for k, v in after.items() if k != name} == {
        k: v for k, v in before.items() if k != name
    }
    doc = after[name]
    assert [entry["key"] for entry in doc["pages"]["zero-grad"]["benchmarks"]] == [
        "step_fill_zeros",
        "step_set_to_none",
    ]
    old_pages = before.get(name, {}).get("pages", {})
    assert {k: v for k, v in doc["pages"].items() if k != "zero-grad"} == old_pages
