"""GitHub Actions 워크플로와 Dependabot 설정을 네트워크 없이 검사합니다.

- 모든 워크플로와 dependabot.yml이 GitHub의 스키마에 맞는지 check-jsonschema로 확인합니다.
- zizmor(--offline)가 중간(medium) 이상의 보안 문제를 하나도 찾지 않는지 확인합니다.
- 액션의 SHA 고정, checkout의 persist-credentials, run 스크립트 안의 `${{ }}`, 작업 시간 제한,
  concurrency, 권한, 포크 차단을 워크플로 파일을 직접 읽어 확인합니다.
- 워크플로가 실행하는 명령이 README의 명령과 글자 그대로 같은지 확인합니다.
- 결과 파일: GPU 워크플로가 풀 리퀘스트를 열기 전에, CI가 모든 결과 파일을 전체 스키마로
  검증하는지(결과 파일이 하나도 없으면 실패), 자체 호스팅 작업이 main에서만 도는지, pip가 PyTorch
  색인에서는 torch만 받고 잠근 꾸러미와 빌드 백엔드를 해시로 확인하는지 확인합니다.
- 자체 호스팅 러너: GPU 워크플로만 전용 라벨(`seven-tips-gpu`)을 쓰고, 다른 워크플로는 그 라벨도
  `self-hosted`도 GPU 워크플로 파일도 이름으로 부르지 않고 GitHub 호스트 러너에서만 도는지
  확인합니다. 포크의 풀 리퀘스트는 고친 워크플로로 돌므로 이 검사가 러너를 지키지는 못합니다.
  지키는 것은 CONTRIBUTING.md의 저장소 설정이고, 그 설명이 라벨과 맞는지도 확인합니다.

각 검사는 일부러 망가뜨린 예제로 실패할 수 있음도 함께 확인합니다. check-jsonschema와 zizmor는
requirements.txt에 고정되어 있으므로, 없으면 건너뛰지 않고 실패합니다.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = GITHUB / "workflows"
DEPENDABOT = GITHUB / "dependabot.yml"
GPU_WORKFLOW = "gpu-benchmark.yml"
EXPECTED_WORKFLOWS = ["ci.yml", "docs.yml", GPU_WORKFLOW]
# 공통 규칙은 폴더의 모든 워크플로에 적용합니다. 새 워크플로도 저절로 검사를 받습니다.
ALL_WORKFLOWS = sorted(path.name for path in WORKFLOWS.glob("*.y*ml"))
INSTALL_HINT = ".venv/bin/pip install -r requirements.txt -e ."
# GPU 측정 작업만 쓰는 자체 호스팅 러너 라벨입니다. 다른 워크플로는 이 라벨을 쓸 수 없습니다.
GPU_LABEL = "seven-tips-gpu"
GPU_RUNS_ON = ["self-hosted", GPU_LABEL]
# GitHub 호스트 러너의 이미지 이름(ubuntu-24.04, windows-2025, macos-15 등)입니다.
GITHUB_HOSTED = re.compile(r"^(ubuntu|windows|macos)-[0-9a-z.-]+$")

SHA_PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<comment>\s+#.*)?$")
VERSION_COMMENT = re.compile(r"^\s+# v\d+(\.\d+)*\b")
FORK_GUARD = re.compile(r"github\.repository == '(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)'")
SEVERITY_ORDER = ["unknown", "informational", "low", "medium", "high"]


# ---------------------------------------------------------------------------
# 도구 찾기
# ---------------------------------------------------------------------------


def check_jsonschema_command() -> list[str]:
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.fail(
            f"check-jsonschema가 설치되어 있지 않습니다. 다음으로 설치하세요: {INSTALL_HINT}"
        )
    return [sys.executable, "-m", "check_jsonschema"]


def zizmor_command() -> list[str]:
    # zizmor는 Python 모듈이 아니라 실행 파일을 설치하므로 이 Python의 scripts 폴더에서 찾습니다.
    found = shutil.which("zizmor", path=sysconfig.get_path("scripts"))
    if found is None:
        pytest.fail(f"zizmor가 설치되어 있지 않습니다. 다음으로 설치하세요: {INSTALL_HINT}")
    return [found]


def pinned_version(package: str) -> str:
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and name.lower() == package:
            return version
    pytest.fail(f"requirements.txt에 {package}의 == 고정이 없습니다")


def run_check_jsonschema(schema: str, paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*check_jsonschema_command(), "--builtin-schema", schema, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def zizmor_findings(directory: Path) -> tuple[list[dict], str]:
    """`zizmor --offline`으로 폴더를 검사해 (무시되지 않은 발견 목록, stderr)를 돌려줍니다."""
    result = subprocess.run(
        [*zizmor_command(), "--offline", "--no-config", "--format", "json", directory.name],
        cwd=directory.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # 종료 코드 0은 발견 없음, 10~14는 발견 있음(가장 높은 심각도)입니다. 그 밖은 도구의 오류입니다.
    assert result.returncode in (0, 10, 11, 12, 13, 14), result.stderr
    findings = [item for item in json.loads(result.stdout) if not item.get("ignored")]
    return findings, result.stderr


def medium_or_worse(findings: list[dict]) -> list[str]:
    bad = []
    for finding in findings:
        severity = finding["determinations"]["severity"].lower()
        if SEVERITY_ORDER.index(severity) >= SEVERITY_ORDER.index("medium"):
            places = [
                location["symbolic"]["key"]["Local"]["verbatim_path"]
                for location in finding["locations"]
                if "Local" in location["symbolic"]["key"]
            ]
            bad.append(f"{finding['ident']} ({severity}): {finding['desc']} @ {places}")
    return bad


# ---------------------------------------------------------------------------
# 워크플로 읽기와 검사 함수
# ---------------------------------------------------------------------------


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(workflow: dict) -> dict:
    """`on:`을 사전으로 돌려줍니다. PyYAML(YAML 1.1)은 키 `on`을 True로 읽으므로 둘 다 봅니다."""
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on or {}


def steps(workflow: dict):
    for job_id, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_id, step


def run_scripts(workflow: dict):
    for job_id, step in steps(workflow):
        if "run" in step:
            yield job_id, step["run"]


def unpinned_uses(text: str) -> list[str]:
    """SHA 40자리로 고정되지 않았거나 버전 주석(`# v1.2.3`)이 없는 `uses:`를 돌려줍니다."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        match = USES_LINE.match(line)
        if not match or match["ref"].startswith("./"):
            continue
        if not SHA_PINNED.match(match["ref"]):
            problems.append(f"{number}행: SHA로 고정되지 않았습니다: {match['ref']}")
        elif not (match["comment"] and VERSION_COMMENT.match(match["comment"])):
            problems.append(f"{number}행: 버전 주석(# vX.Y.Z)이 없습니다: {match['ref']}")
    return problems


def credential_and_injection_problems(workflow: dict) -> list[str]:
    """checkout의 persist-credentials, run 안의 `${{ }}`, 시간 제한, concurrency를 검사합니다."""
    problems = []
    for job_id, step in steps(workflow):
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            if (step.get("with") or {}).get("persist-credentials") is not False:
                problems.append(f"{job_id}: checkout에 persist-credentials: false가 없습니다")
    for job_id, script in run_scripts(workflow):
        # 어떤 `${{ }}`도 run 스크립트에 직접 펼치지 않습니다. 값은 env:로 넘깁니다.
        if "${{" in script:
            problems.append(f"{job_id}: run 스크립트 안에 ${{{{ }}}}가 있습니다")
    for job_id, job in workflow["jobs"].items():
        timeout = job.get("timeout-minutes")
        if not (isinstance(timeout, int) and 0 < timeout <= 360):
            problems.append(f"{job_id}: timeout-minutes가 없거나 잘못되었습니다: {timeout!r}")
    concurrency = workflow.get("concurrency")
    if not (isinstance(concurrency, dict) and concurrency.get("group")):
        problems.append("워크플로에 concurrency 그룹이 없습니다")
    elif "cancel-in-progress" not in concurrency:
        problems.append("concurrency에 cancel-in-progress를 정하지 않았습니다")
    if workflow.get("permissions") != {"contents": "read"}:
        problems.append(
            f"워크플로 권한이 contents: read만이 아닙니다: {workflow.get('permissions')}"
        )
    return problems


def runs_on_self_hosted(job: dict) -> bool:
    """GitHub 호스트 러너 이름 하나가 아니면 자체 호스팅으로 봅니다.

    라벨 목록, 러너 그룹(`{group: …}`), 식(`${{ matrix.runner }}`)은 모두 자체 호스팅 러너로 갈 수
    있으므로 놓치지 않게 보수적으로 셉니다. 재사용 워크플로를 부르는 작업(`uses:`)은 러너를 정하지
    않습니다(`self_hosted_reach_problems`가 따로 봅니다).
    """
    if "uses" in job and "runs-on" not in job:
        return False
    runs_on = job.get("runs-on")
    return not (isinstance(runs_on, str) and GITHUB_HOSTED.match(runs_on))


def yaml_strings(value):
    """파싱한 YAML 안의 모든 글자(키와 값)를 돌려줍니다. 주석은 파싱 결과에 없어 보지 않습니다."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from yaml_strings(key)
            yield from yaml_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from yaml_strings(item)


def self_hosted_reach_problems(directory: Path) -> list[str]:
    """GPU 워크플로가 아닌 워크플로가 자체 호스팅 GPU 러너에 닿을 길을 찾습니다.

    다른 워크플로는 GPU 러너 라벨, `self-hosted`, GPU 워크플로 파일 이름을 어디에도(runs-on, matrix,
    재사용 워크플로 호출, 식) 쓰지 않고, 모든 작업이 GitHub 호스트 러너 이름 하나에서 돌아야 합니다.
    """
    problems = []
    names = sorted(path.name for path in directory.glob("*.y*ml"))
    if GPU_WORKFLOW not in names:
        problems.append(f"{GPU_WORKFLOW}가 없습니다")
    reserved = ("self-hosted", GPU_LABEL, GPU_WORKFLOW)
    for name in names:
        if name == GPU_WORKFLOW:
            continue
        workflow = load(directory / name)
        for text in yaml_strings(workflow):
            for word in reserved:
                if word in text.lower():
                    problems.append(f"{name}: {word!r}를 씁니다: {text.strip()[:80]!r}")
        for job_id, job in (workflow.get("jobs") or {}).items():
            if "uses" in job:
                problems.append(f"{name}: {job_id}: 재사용 워크플로를 부릅니다: {job['uses']}")
            elif runs_on_self_hosted(job):
                runs_on = job.get("runs-on")
                problems.append(
                    f"{name}: {job_id}: GitHub 호스트 러너 이름 하나가 아닙니다: {runs_on!r}"
                )
    return problems


def write_scopes(job: dict) -> list[str]:
    permissions = job.get("permissions")
    if permissions is None:
        return []  # 워크플로 권한(contents: read)을 물려받습니다.
    if isinstance(permissions, str):
        return [permissions] if "write" in permissions else []
    return [scope for scope, level in permissions.items() if level == "write"]


def gpu_workflow_problems(workflow: dict) -> list[str]:
    """GPU 측정 워크플로가 포크와 풀 리퀘스트로부터 안전한지 검사합니다."""
    problems = []
    on = triggers(workflow)
    for forbidden in ("pull_request", "pull_request_target", "workflow_run", "issue_comment"):
        if forbidden in on:
            problems.append(f"트리거 {forbidden}가 있습니다")
    if set(on) != {"workflow_dispatch", "schedule", "push"}:
        problems.append(f"트리거가 workflow_dispatch, schedule, push가 아닙니다: {sorted(on)}")
    if workflow.get("permissions") != {"contents": "read"}:
        problems.append("워크플로 권한이 contents: read만이 아닙니다")
    jobs = workflow["jobs"]
    if not any(job.get("runs-on") == GPU_RUNS_ON for job in jobs.values()):
        problems.append(f"{GPU_RUNS_ON}에서 도는 측정 작업이 없습니다")
    guarded_repos = set()
    for job_id, job in jobs.items():
        guard = FORK_GUARD.search(str(job.get("if", "")))
        if guard is None:
            problems.append(f"{job_id}: 포크 차단(github.repository == 'OWNER/REPO')이 없습니다")
        else:
            guarded_repos.add(guard["repo"])
        if not isinstance(job.get("timeout-minutes"), int):
            problems.append(f"{job_id}: timeout-minutes가 없습니다")
        scopes = write_scopes(job)
        if runs_on_self_hosted(job):
            if job.get("runs-on") != GPU_RUNS_ON:
                problems.append(f"{job_id}: 자체 호스팅 작업의 runs-on이 {GPU_RUNS_ON}가 아닙니다")
            if job.get("permissions") is None:
                problems.append(f"{job_id}: 자체 호스팅 작업은 권한을 명시해야 합니다")
            if scopes:
                problems.append(f"{job_id}: 자체 호스팅 작업에 쓰기 권한이 있습니다: {scopes}")
        elif scopes:
            runs_on = job.get("runs-on")
            if not (isinstance(runs_on, str) and runs_on.startswith("ubuntu-")):
                problems.append(
                    f"{job_id}: 쓰기 권한 작업이 GitHub 호스트 러너가 아닙니다: {runs_on}"
                )
            if set(scopes) - {"contents", "pull-requests"}:
                problems.append(f"{job_id}: 필요 없는 쓰기 권한이 있습니다: {scopes}")
    if len(guarded_repos) > 1:
        problems.append(f"작업마다 포크 차단의 저장소 이름이 다릅니다: {sorted(guarded_repos)}")
    for job_id, script in run_scripts(workflow):
        if re.search(r"\bgit\s+push\b", script):
            problems.append(f"{job_id}: run에서 직접 git push합니다(풀 리퀘스트로만 올립니다)")
    return problems


# ---------------------------------------------------------------------------
# 도구와 스키마
# ---------------------------------------------------------------------------


def test_expected_workflow_files_exist():
    assert set(EXPECTED_WORKFLOWS) <= set(ALL_WORKFLOWS)
    assert DEPENDABOT.is_file()


@pytest.mark.parametrize("package", ["check-jsonschema", "zizmor"])
def test_installed_tools_match_requirements_pins(package):
    """검사 도구의 설치된 버전이 requirements.txt의 고정 버전과 같은지 확인합니다."""
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{package}가 설치되어 있지 않습니다. 다음으로 설치하세요: {INSTALL_HINT}")
    assert installed == pinned_version(package)


def test_workflows_match_github_workflow_schema():
    paths = [WORKFLOWS / name for name in ALL_WORKFLOWS]
    result = run_check_jsonschema("vendor.github-workflows", paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dependabot_config_matches_schema():
    result = run_check_jsonschema("vendor.dependabot", [DEPENDABOT])
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_broken_files(tmp_path):
    """스키마 검사가 실제로 실패할 수 있음을, 일부러 망가뜨린 파일로 확인합니다."""
    workflow = tmp_path / "broken.yml"
    # runs-on이 없는 작업과 잘못된 트리거 이름입니다.
    workflow.write_text("on: pushh\njobs:\n  build:\n    steps:\n      - run: true\n")
    result = run_check_jsonschema("vendor.github-workflows", [workflow])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "broken.yml" in result.stdout

    dependabot = tmp_path / "dependabot.yml"
    dependabot.write_text("version: 2\nupdates:\n  - package-ecosystem: pip\n")
    result = run_check_jsonschema("vendor.dependabot", [dependabot])
    assert result.returncode == 1, result.stdout + result.stderr


def test_zizmor_finds_nothing_at_medium_or_above():
    findings, log = zizmor_findings(GITHUB)
    assert medium_or_worse(findings) == []
    # 네 파일을 모두 검사했는지 zizmor의 기록으로 확인합니다.
    for path in [DEPENDABOT, *(WORKFLOWS / name for name in ALL_WORKFLOWS)]:
        assert f"completed {path.relative_to(ROOT).as_posix()}" in log


def test_zizmor_flags_a_dangerous_workflow(tmp_path):
    """zizmor 검사가 실제로 실패할 수 있음을, 위험한 워크플로로 확인합니다."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "bad.yml").write_text(
        "name: bad\n"
        "on: pull_request_target\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n"
        "          ref: ${{ github.event.pull_request.head.sha }}\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n'
    )
    findings, _ = zizmor_findings(tmp_path / ".github")
    flagged = " ".join(medium_or_worse(findings))
    for ident in ("dangerous-triggers", "template-injection", "unpinned-uses", "artipacked"):
        assert ident in flagged


# ---------------------------------------------------------------------------
# 모든 워크플로에 공통인 규칙
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_WORKFLOWS)
def test_every_action_is_pinned_to_a_commit_sha_with_a_version_comment(name):
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert unpinned_uses(text) == []
    # 줄 단위 검사가 놓친 `uses:`가 없는지(예: 한 줄 사전 표기) 파싱 결과와 개수를 맞춥니다.
    parsed = [step["uses"] for _, step in steps(load(WORKFLOWS / name)) if "uses" in step]
    scanned = [m["ref"] for line in text.splitlines() if (m := USES_LINE.match(line))]
    assert parsed == scanned
    assert parsed, "액션을 하나도 쓰지 않는 워크플로는 예상하지 않았습니다"


@pytest.mark.parametrize("name", ALL_WORKFLOWS)
def test_credentials_injection_timeouts_concurrency_and_permissions(name):
    assert credential_and_injection_problems(load(WORKFLOWS / name)) == []


def test_common_checks_can_fail():
    """공통 규칙 검사가 실제로 실패할 수 있음을, 규칙을 모두 어긴 워크플로로 확인합니다."""
    text = (
        "on: push\n"
        "permissions: write-all\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - uses: actions/setup-python@a309ff8b426b58ec0e2a45f0f869d46889d02405\n"
        '      - run: echo "${{ github.event.head_commit.message }}"\n'
    )
    assert len(unpinned_uses(text)) == 2
    problems = " ".join(credential_and_injection_problems(yaml.safe_load(text)))
    for expected in ("persist-credentials", "${{ }}", "timeout-minutes", "concurrency", "권한"):
        assert expected in problems


# ---------------------------------------------------------------------------
# 워크플로마다의 규칙
# ---------------------------------------------------------------------------


def test_gpu_benchmark_cannot_run_from_a_fork_or_a_pull_request():
    workflow = load(WORKFLOWS / "gpu-benchmark.yml")
    assert gpu_workflow_problems(workflow) == []
    on = triggers(workflow)
    assert on["push"]["branches"] == ["main"]
    assert {"snippets/**", "benchmarks/**"} <= set(on["push"]["paths"])
    # 측정 결과를 합쳐도 다시 측정이 돌지 않도록 results/는 paths에 없습니다.
    assert not any(path.startswith("results") for path in on["push"]["paths"])


def test_gpu_benchmark_measures_on_the_gpu_and_opens_a_pull_request():
    workflow = load(WORKFLOWS / "gpu-benchmark.yml")
    jobs = workflow["jobs"]
    measure = next(job_id for job_id, job in jobs.items() if runs_on_self_hosted(job))
    uploads = [s for j, s in steps(workflow) if s.get("uses", "").startswith("actions/upload-")]
    assert [(step["with"]["path"], step["with"]["if-no-files-found"]) for step in uploads] == [
        ("results/*.json", "error")
    ]
    assert all(j == measure for j, s in steps(workflow) if s in uploads)
    publishers = [job_id for job_id, job in jobs.items() if write_scopes(job)]
    assert len(publishers) == 1
    publisher = jobs[publishers[0]]
    assert publisher["needs"] == measure
    uses = [step.get("uses", "") for step in publisher["steps"]]
    assert any(u.startswith("actions/download-artifact@") for u in uses)
    create_pr = next(s for s in publisher["steps"] if "create-pull-request@" in s.get("uses", ""))
    assert create_pr["with"]["token"] == "${{ secrets.GITHUB_TOKEN }}"
    assert create_pr["with"]["base"] == "main"
    assert create_pr["with"]["branch"] != "main"
    assert create_pr["with"]["add-paths"] == "results/*.json"


def test_gpu_checks_can_fail():
    """GPU 워크플로 검사가 실제로 실패할 수 있음을, 위험하게 바꾼 사본으로 확인합니다."""
    workflow = load(WORKFLOWS / "gpu-benchmark.yml")
    on = triggers(workflow)
    on["pull_request_target"] = None
    workflow["permissions"] = {"contents": "write"}
    measure, publisher = workflow["jobs"].values()
    measure["permissions"] = {"contents": "write"}
    del measure["if"]
    publisher["runs-on"] = ["self-hosted", "gpu"]
    del publisher["timeout-minutes"]
    problems = " ".join(gpu_workflow_problems(workflow))
    for expected in ("pull_request_target", "워크플로 권한", "쓰기 권한", "포크 차단", "timeout"):
        assert expected in problems
    # 전용 라벨 대신 흔한 라벨을 쓰면, 같은 라벨을 단 다른 러너로 가거나 다른 워크플로와 겹칩니다.
    assert "open-pr: 자체 호스팅 작업의 runs-on이" in problems
    measure["runs-on"] = ["self-hosted", "gpu"]
    assert "측정 작업이 없습니다" in " ".join(gpu_workflow_problems(workflow))


def test_docs_deploy_job_has_only_pages_permissions():
    workflow = load(WORKFLOWS / "docs.yml")
    on = triggers(workflow)
    assert on["push"]["branches"] == ["main"]
    assert "pull_request" not in on and "pull_request_target" not in on
    deployers = [job for job in workflow["jobs"].values() if write_scopes(job)]
    assert len(deployers) == 1
    deploy = deployers[0]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"] == {
        "name": "github-pages",
        "url": "${{ steps.deployment.outputs.page_url }}",
    }
    assert deploy["steps"][0]["id"] == "deployment"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert not runs_on_self_hosted(deploy)
    build = workflow["jobs"][deploy["needs"]]
    uploads = [s for s in build["steps"] if "upload-pages-artifact@" in s.get("uses", "")]
    assert [step["with"]["path"] for step in uploads] == ["site"]


def test_ci_runs_on_github_hosted_runners_with_read_only_token():
    workflow = load(WORKFLOWS / "ci.yml")
    on = triggers(workflow)
    assert "push" in on and "pull_request" in on
    assert "pull_request_target" not in on
    for job in workflow["jobs"].values():
        assert not runs_on_self_hosted(job)
        assert write_scopes(job) == []


def test_only_the_gpu_workflow_names_the_self_hosted_runner():
    """GPU 러너 라벨과 `self-hosted`는 gpu-benchmark.yml만 씁니다. 나머지는 GitHub 호스트 러너."""
    assert self_hosted_reach_problems(WORKFLOWS) == []
    (measure,) = [
        job for job in load(WORKFLOWS / GPU_WORKFLOW)["jobs"].values() if runs_on_self_hosted(job)
    ]
    assert measure["runs-on"] == GPU_RUNS_ON


def test_self_hosted_reach_check_can_fail(tmp_path):
    """라벨 검사가 실제로 실패할 수 있음을, 임시 폴더에 심은 나쁜 워크플로로 확인합니다."""
    for path in WORKFLOWS.glob("*.y*ml"):
        shutil.copy(path, tmp_path / path.name)
    assert self_hosted_reach_problems(tmp_path) == []  # 복사본은 깨끗합니다
    docs = tmp_path / "docs.yml"
    text = docs.read_text(encoding="utf-8")
    assert text.count("runs-on: ubuntu-24.04") >= 1
    docs.write_text(
        text.replace("runs-on: ubuntu-24.04", f"runs-on: [self-hosted, {GPU_LABEL}]", 1)
    )
    (tmp_path / "planted.yml").write_text(
        "name: planted\n"
        "on: pull_request\n"
        "permissions:\n"
        "  contents: read\n"
        "jobs:\n"
        "  by-matrix:\n"
        "    strategy:\n"
        "      matrix:\n"
        "        runner: [Self-Hosted]\n"
        "    runs-on: ${{ matrix.runner }}\n"
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  by-group:\n"
        "    runs-on:\n"
        f"      group: {GPU_LABEL}\n"
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  by-label:\n"
        "    runs-on: gpu-box\n"
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  by-call:\n"
        f"    uses: ./.github/workflows/{GPU_WORKFLOW}\n"
    )
    problems = self_hosted_reach_problems(tmp_path)
    joined = "\n".join(problems)
    assert "docs.yml: 'self-hosted'" in joined and f"docs.yml: '{GPU_LABEL}'" in joined
    assert "docs.yml: build: GitHub 호스트 러너 이름 하나가 아닙니다" in joined
    for job_id in ("by-matrix", "by-group", "by-label", "by-call"):
        assert f"planted.yml: {job_id}:" in joined, job_id
    assert "planted.yml: 'self-hosted'" in joined  # matrix 값의 대소문자를 바꿔도 찾습니다
    assert f"planted.yml: '{GPU_WORKFLOW}'" in joined
    (tmp_path / GPU_WORKFLOW).unlink()
    assert f"{GPU_WORKFLOW}가 없습니다" in self_hosted_reach_problems(tmp_path)


def contributing_section(title: str) -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def runner_setup_problems(section: str, workflow: dict) -> list[str]:
    """CONTRIBUTING의 저장소 설정 안내가 GPU 워크플로의 라벨, 저장소, 파일과 맞는지 검사합니다."""
    flat = " ".join(section.split())
    (measure,) = [job for job in workflow["jobs"].values() if runs_on_self_hosted(job)]
    label = measure["runs-on"][-1]
    repo = FORK_GUARD.search(str(measure.get("if", "")))
    expected = [
        f"--labels {label}",
        f"--runnergroup {label}",
        "Selected workflows",
        f"{repo['repo'] if repo else '?'}/.github/workflows/{GPU_WORKFLOW}@main",
        "Approval for running fork pull request workflows from contributors",
        "Require approval for all external contributors",
    ]
    return [f"안내에 {item!r}가 없습니다" for item in expected if item not in flat]


def test_contributing_tells_the_owner_how_to_fence_the_gpu_runner():
    """러너를 지키는 GitHub 설정(러너 그룹, 승인)을 관리자가 할 일로 적었는지, 라벨이 맞는지."""
    section = contributing_section("GPU 러너와 저장소 설정")
    assert runner_setup_problems(section, load(WORKFLOWS / GPU_WORKFLOW)) == []


def test_runner_setup_check_can_fail():
    section = contributing_section("GPU 러너와 저장소 설정")
    workflow = load(WORKFLOWS / GPU_WORKFLOW)
    measure = next(job for job in workflow["jobs"].values() if runs_on_self_hosted(job))
    measure["runs-on"] = ["self-hosted", "other-gpu"]
    problems = " ".join(runner_setup_problems(section.replace("Selected workflows", "-"), workflow))
    for expected in ("--labels other-gpu", "--runnergroup other-gpu", "Selected workflows"):
        assert expected in problems


# ---------------------------------------------------------------------------
# README의 명령과 같은지
# ---------------------------------------------------------------------------


def readme_bash_blocks(section: str | None = None) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if section is not None:
        text = text[text.index(f"## {section}") :]
    return re.findall(r"^```bash\n(.*?)\n```$", text, re.MULTILINE | re.DOTALL)


def readme_test_command() -> str:
    command = readme_bash_blocks()[1]
    assert command.endswith("-m pytest") and "\n" not in command
    return command


def running_lines(workflow: dict, job_id: str | None = None) -> list[str]:
    """조건 없이(`if:` 없음), 실패를 무시하지 않고(`continue-on-error` 없음) 도는 단계의 run 줄.

    README 명령이 `if: false`인 단계에 있거나 실패를 무시하면, 글자는 같아도 CI가 그 명령을
    확인하지 않습니다.
    """
    return [
        line.strip()
        for job, step in steps(workflow)
        if job_id in (None, job) and "run" in step and unconditional(step)
        for line in step["run"].splitlines()
    ]


def test_ci_runs_the_readme_test_command_verbatim():
    workflow = load(WORKFLOWS / "ci.yml")
    assert readme_test_command() in running_lines(workflow)


def test_gpu_benchmark_runs_the_readme_gpu_command_verbatim_on_the_gpu_runner():
    command = readme_bash_blocks("GPU에서 숫자를 다시 재려면")[0]
    assert "--gpu" in command and "\n" not in command
    workflow = load(WORKFLOWS / "gpu-benchmark.yml")
    (measure,) = [job_id for job_id, job in workflow["jobs"].items() if runs_on_self_hosted(job)]
    assert command in running_lines(workflow, measure)


def test_docs_runs_the_readme_install_part_and_a_strict_build():
    serve = readme_bash_blocks()[0]
    install, _, last = serve.rpartition(" && ")
    assert last == ".venv/bin/mkdocs serve"
    lines = running_lines(load(WORKFLOWS / "docs.yml"))
    assert install in lines
    assert ".venv/bin/mkdocs build --strict" in lines


def test_readme_command_checks_can_fail():
    """README 명령이 조건부 단계나 실패를 무시하는 단계에 있으면 찾지 못합니다."""
    workflow = load(WORKFLOWS / "ci.yml")
    step = next(s for _, s in steps(workflow) if readme_test_command() in s.get("run", ""))
    step["if"] = "false"
    assert readme_test_command() not in running_lines(workflow)
    del step["if"]
    step["continue-on-error"] = True
    assert readme_test_command() not in running_lines(workflow)


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


def test_ci_run_script_ends_with_the_readme_test_command():
    assert ci_run_problems((ROOT / ".ci" / "run").read_text(encoding="utf-8")) == []


def test_ci_run_check_can_fail():
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    broken = text.replace("set -euo pipefail\n", "").replace(
        readme_test_command(), "exit 0\n" + readme_test_command().replace(" -e .", "")
    )
    problems = " ".join(ci_run_problems(broken))
    for expected in ("set -euo pipefail", "마지막 줄", "exit"):
        assert expected in problems


# ---------------------------------------------------------------------------
# 바깥에서 온 결과 파일, main에서만 도는 작업, 잠근 의존성
# ---------------------------------------------------------------------------

MAIN_ONLY = "github.ref == 'refs/heads/main'"
VALIDATE = "-m results_format.results_file"
HASHED_INSTALL = "install --require-hashes --no-deps -r requirements-lock.txt"
README_INSTALL = "install -r requirements.txt"
# pip의 --no-* 옵션은 환경 변수 값이 거꾸로입니다: PIP_NO_BUILD_ISOLATION=0이
# --no-build-isolation입니다. tests/test_dependencies.py가 이 두 값으로 정말 격리 없이, 고정한
# setuptools로 빌드하는지 확인합니다.
BUILD_BACKEND_ENV = {"PIP_NO_BUILD_ISOLATION": "0", "PIP_CHECK_BUILD_DEPENDENCIES": "1"}
# PyTorch CPU 색인의 torch 페이지입니다. 색인 전체가 아니므로 여기서는 torch만 받습니다.
TORCH_PAGE = "https://download.pytorch.org/whl/cpu/torch/"
INDEX_OPTIONS = ("--extra-index-url", "--index-url", "--find-links", " -i ", " -f ")


def main_only_problems(workflow: dict) -> list[str]:
    """자체 호스팅 작업과 쓰기 권한 작업이 main에서만 도는지 검사합니다."""
    problems = []
    for job_id, job in workflow["jobs"].items():
        if not (runs_on_self_hosted(job) or write_scopes(job)):
            continue
        condition = str(job.get("if", ""))
        if MAIN_ONLY not in condition:
            problems.append(f"{job_id}: main에서만 돌게 하는 검사({MAIN_ONLY})가 없습니다")
        elif "||" in condition or "!" in condition:
            problems.append(f"{job_id}: if가 main 검사를 &&로만 잇지 않습니다: {condition}")
    return problems


def step_index(job_steps: list[dict], predicate) -> int | None:
    return next((i for i, step in enumerate(job_steps) if predicate(step)), None)


def unconditional(step: dict) -> bool:
    return "if" not in step and not step.get("continue-on-error")


def publish_validation_problems(workflow: dict) -> list[str]:
    """쓰기 권한 작업이 풀 리퀘스트를 열기 전에 결과 파일을 전체 스키마로 검증하는지 검사합니다."""
    problems = []
    if not any(write_scopes(job) for job in workflow["jobs"].values()):
        # 검사할 작업이 없으면 아래 반복이 아무것도 보지 않고 통과합니다.
        problems.append("결과 풀 리퀘스트를 여는(쓰기 권한) 작업이 없습니다")
    for job_id, job in workflow["jobs"].items():
        if not write_scopes(job):
            continue
        job_steps = job.get("steps", [])
        opens_pr = step_index(job_steps, lambda s: "create-pull-request@" in s.get("uses", ""))
        copies = step_index(job_steps, lambda s: "shutil.copyfile" in s.get("run", ""))
        validates = step_index(
            job_steps,
            lambda s: any(VALIDATE in line and "results/*.json" in line for line in run_of(s)),
        )
        if validates is None:
            problems.append(f"{job_id}: 결과 파일을 benchmarks.results_file로 검증하지 않습니다")
            continue
        step = job_steps[validates]
        lines = run_of(step)
        install = [i for i, line in enumerate(lines) if HASHED_INSTALL in line]
        check = [i for i, line in enumerate(lines) if VALIDATE in line]
        if not install or install[0] > check[0]:
            problems.append(f"{job_id}: 검증 전에 잠근 검사 도구를 해시로 설치하지 않습니다")
        if opens_pr is None or validates > opens_pr:
            problems.append(f"{job_id}: 풀 리퀘스트를 연 뒤에야 검증합니다")
        if copies is None or validates < copies:
            problems.append(f"{job_id}: results/에 넣기 전에 검증해 새 파일을 보지 못합니다")
        if not unconditional(step):
            problems.append(f"{job_id}: 검증 단계가 조건부이거나 실패를 무시합니다")
    return problems


def run_of(step: dict) -> list[str]:
    return [line.strip() for line in step.get("run", "").splitlines()]


def ci_validation_problems(workflow: dict) -> list[str]:
    """CI가 풀 리퀘스트마다 모든 results/*.json을 검증하는지 검사합니다."""
    problems = []
    if "pull_request" not in triggers(workflow):
        problems.append("CI가 풀 리퀘스트에서 돌지 않습니다")
    for job_id, job in workflow["jobs"].items():
        job_steps = job.get("steps", [])
        installs = step_index(job_steps, lambda s: any(INSTALL_HINT in ln for ln in run_of(s)))
        validates = step_index(
            job_steps,
            lambda s: (
                any(VALIDATE in line for line in run_of(s)) and "results/*.json" in s.get("run", "")
            ),
        )
        if validates is None:
            problems.append(f"{job_id}: 모든 results/*.json을 검증하는 단계가 없습니다")
        elif installs is None or validates < installs:
            problems.append(f"{job_id}: 설치하기 전에 검증합니다")
        elif not unconditional(job_steps[validates]):
            problems.append(f"{job_id}: 결과 파일 검증이 조건부이거나 실패를 무시합니다")
    return problems


def environments(workflow: dict):
    yield "워크플로", workflow.get("env") or {}
    for job_id, job in workflow["jobs"].items():
        yield job_id, job.get("env") or {}
        for step in job.get("steps", []):
            yield job_id, step.get("env") or {}


def dependency_source_problems(workflow: dict) -> list[str]:
    """pip가 PyPI 말고는 PyTorch CPU 색인의 torch 페이지만 보는지, 설치 전에 해시로 확인하는지."""
    problems = []
    for where, env in environments(workflow):
        for name, value in env.items():
            if name in ("PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
                problems.append(f"{where}: {name}는 모든 꾸러미를 그 색인에서 받게 합니다")
            if name == "PIP_FIND_LINKS" and value != TORCH_PAGE:
                problems.append(f"{where}: PIP_FIND_LINKS가 torch 페이지가 아닙니다: {value}")
    for job_id, script in run_scripts(workflow):
        for line in script.splitlines():
            if "pip" in line and any(option in f" {line} " for option in INDEX_OPTIONS):
                problems.append(f"{job_id}: pip에 색인을 직접 줍니다: {line.strip()}")
    # GPU 러너도 예외가 아닙니다. 잠근 꾸러미는 해시로 확인하고, README 명령은 CUDA 빌드의 torch와
    # 그 nvidia-* 꾸러미(torch가 정확한 버전으로 고정합니다)와 -e .만 더합니다.
    workflow_env = workflow.get("env") or {}
    for job_id, job in workflow["jobs"].items():
        job_steps = job.get("steps", [])
        readme = step_index(job_steps, lambda s: any(README_INSTALL in ln for ln in run_of(s)))
        if readme is None:
            continue
        hashed = step_index(job_steps, lambda s: any(HASHED_INSTALL in ln for ln in run_of(s)))
        if hashed is None or hashed > readme or not unconditional(job_steps[hashed]):
            problems.append(f"{job_id}: README 설치 전에 잠근 꾸러미를 해시로 확인하지 않습니다")
        # -e .의 빌드 백엔드는 격리된 환경에 새로 받지 않고, 해시로 확인한 잠금의 setuptools입니다.
        env = {**workflow_env, **(job.get("env") or {}), **(job_steps[readme].get("env") or {})}
        for name, value in BUILD_BACKEND_ENV.items():
            if str(env.get(name)) != value:
                problems.append(
                    f"{job_id}: README 설치에 {name}={value}가 없습니다: {env.get(name)!r}"
                )
    return problems


def test_self_hosted_and_publishing_jobs_run_only_from_main():
    workflow = load(WORKFLOWS / "gpu-benchmark.yml")
    assert main_only_problems(workflow) == []
    # workflow_dispatch는 어느 브랜치에서나 누를 수 있습니다. 그래서 검사가 꼭 있어야 합니다.
    assert "workflow_dispatch" in triggers(workflow)


def test_open_pr_validates_results_with_the_full_schema_before_opening_the_pr():
    assert publish_validation_problems(load(WORKFLOWS / "gpu-benchmark.yml")) == []


def test_ci_validates_every_results_file_on_pull_requests():
    assert ci_validation_problems(load(WORKFLOWS / "ci.yml")) == []


@pytest.mark.parametrize("name", ALL_WORKFLOWS)
def test_pytorch_index_serves_torch_only_and_locked_packages_are_hashed(name):
    assert dependency_source_problems(load(WORKFLOWS / name)) == []


def test_ci_and_docs_point_pip_at_the_torch_page():
    for name in ("ci.yml", "docs.yml"):
        env = {k: v for _, e in environments(load(WORKFLOWS / name)) for k, v in e.items()}
        assert env.get("PIP_FIND_LINKS") == TORCH_PAGE, name


def test_results_guard_and_dependency_checks_can_fail():
    """새 검사들이 실제로 실패할 수 있음을, 규칙을 어기게 바꾼 사본으로 확인합니다."""
    gpu = load(WORKFLOWS / "gpu-benchmark.yml")
    measure, publisher = gpu["jobs"].values()
    measure["if"] = "github.repository == 'pytorch-kr/seven-tips'"
    publisher["if"] = f"github.repository == 'pytorch-kr/seven-tips' || {MAIN_ONLY}"
    problems = " ".join(main_only_problems(gpu))
    assert "measure: main에서만" in problems and "open-pr: if가 main 검사를" in problems

    gpu = load(WORKFLOWS / "gpu-benchmark.yml")
    job_steps = gpu["jobs"]["open-pr"]["steps"]
    validate = next(s for s in job_steps if VALIDATE in s.get("run", ""))
    job_steps.remove(validate)
    assert "검증하지 않습니다" in " ".join(publish_validation_problems(gpu))
    job_steps.append(dict(validate, **{"continue-on-error": True}))  # 풀 리퀘스트 뒤, 무시함
    job_steps[-1]["run"] = validate["run"].replace("--require-hashes --no-deps ", "")
    problems = " ".join(publish_validation_problems(gpu))
    for expected in ("연 뒤에야", "조건부이거나", "해시로 설치하지"):
        assert expected in problems
    job_steps.insert(0, job_steps.pop())  # results/에 복사하기 전
    assert "넣기 전에 검증" in " ".join(publish_validation_problems(gpu))
    del gpu["jobs"]["open-pr"]["permissions"]  # 쓰기 작업이 없으면 검사할 것이 없다고 실패합니다
    assert "쓰기 권한) 작업이 없습니다" in " ".join(publish_validation_problems(gpu))

    ci = load(WORKFLOWS / "ci.yml")
    del triggers(ci)["pull_request"]
    ci_steps = ci["jobs"]["test"]["steps"]
    ci_steps[:] = [s for s in ci_steps if VALIDATE not in s.get("run", "")]
    problems = " ".join(ci_validation_problems(ci))
    assert "풀 리퀘스트에서 돌지 않습니다" in problems and "검증하는 단계가 없습니다" in problems

    ci = load(WORKFLOWS / "ci.yml")
    ci["jobs"]["test"]["env"] = {"PIP_EXTRA_INDEX_URL": "https://download.pytorch.org/whl/cpu"}
    ci_steps = ci["jobs"]["test"]["steps"]
    ci_steps[:] = [s for s in ci_steps if HASHED_INSTALL not in s.get("run", "")]
    ci_steps.append({"run": "pip install --extra-index-url https://example.org/simple x"})
    readme_step = next(s for s in ci_steps if README_INSTALL in s.get("run", ""))
    readme_step["env"] = {"PIP_NO_BUILD_ISOLATION": "1"}  # 이름만 보고 1을 주면 격리가 켜집니다
    problems = " ".join(dependency_source_problems(ci))
    for expected in ("PIP_EXTRA_INDEX_URL", "색인을 직접", "해시로 확인하지 않습니다"):
        assert expected in problems
    assert "PIP_NO_BUILD_ISOLATION=0가 없습니다" in problems
    assert "PIP_CHECK_BUILD_DEPENDENCIES=1가 없습니다" in problems

    # GPU 러너의 측정 작업도 해시 단계를 건너뛸 수 없습니다(예전에는 자체 호스팅이라고 빠졌습니다).
    gpu = load(WORKFLOWS / "gpu-benchmark.yml")
    measure_steps = gpu["jobs"]["measure"]["steps"]
    measure_steps[:] = [s for s in measure_steps if HASHED_INSTALL not in s.get("run", "")]
    assert "measure: README 설치 전에" in " ".join(dependency_source_problems(gpu))


def ci_validation_script() -> str:
    workflow = load(WORKFLOWS / "ci.yml")
    (script,) = [s for _, s in run_scripts(workflow) if VALIDATE in s]
    return script


def committed_results(directory: Path = ROOT / "results") -> list[Path]:
    """검증할 결과 파일들입니다. 하나도 없으면 아무것도 확인하지 못하므로 실패합니다."""
    files = sorted(directory.glob("*.json"))
    if not files:
        pytest.fail(f"{directory}에 결과 파일(*.json)이 없습니다. 확인할 결과 파일이 있어야 합니다")
    return files


def test_committed_results_refuse_an_empty_folder(tmp_path):
    """`good` 검사가 빈 results/로 저절로 통과하지 않는다는 것을 확인합니다."""
    with pytest.raises(pytest.fail.Exception, match="결과 파일"):
        committed_results(tmp_path)
    (tmp_path / "notes.txt").write_text("결과 파일이 아닙니다")
    with pytest.raises(pytest.fail.Exception):
        committed_results(tmp_path)


@pytest.mark.parametrize("planted", ["none", "good", "bad"])
def test_ci_validation_script_passes_good_files_and_stops_on_bad_ones(tmp_path, planted):
    """CI의 검증 스크립트를 그대로 실행합니다: 커밋된 결과 파일은 모두 통과, 틀린 파일은 이름을 짚고
    실패, 결과 파일이 하나도 없으면 확인할 것이 없다고 실패합니다."""
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    for package in ("results_format", "guide", "torchdoctor"):
        (tmp_path / package).symlink_to(ROOT / package)
    results = tmp_path / "results"
    results.mkdir()
    planted_files = []
    if planted == "good":
        for path in committed_results():
            (results / path.name).write_bytes(path.read_bytes())
            planted_files.append(path.name)
    elif planted == "bad":
        (results / "cpu-bad.json").write_text('{"schema": 1, "device": "<script>"}')
    result = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", ci_validation_script()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if planted == "bad":
        assert result.returncode != 0
        assert "cpu-bad.json" in result.stderr
        assert "Traceback" not in result.stderr
    elif planted == "none":
        assert result.returncode != 0, result.stdout
        assert "결과 파일" in result.stderr and "Traceback" not in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        # 검증기가 파일마다 이름을 남깁니다. 아무 파일도 읽지 않고 통과하지 않았는지 확인합니다.
        for name in planted_files:
            assert name in result.stdout + result.stderr
