"""모든 스니펫 모듈이 지키는 약속: import할 때 아무것도 실행하지 않고, 스크립트로 실행하면
`--device cuda`를 GPU 없는 컴퓨터에서 한국어 메시지와 종료 코드 1로 거절합니다. 명령줄과 장치
고르기는 snippets/_cli.py 한 곳에 있고, 모든 스니펫의 `__main__` 블록이 그것을 씁니다."""

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
# 페이지가 보여 주는 스니펫 모듈. 밑줄로 시작하는 모듈(_cli.py)은 스크립트 실행을 돕는 배관입니다.
MODULES = sorted(p for p in (ROOT / "snippets").glob("*.py") if not p.name.startswith("_"))
CLI = importlib.import_module("snippets._cli")


def test_every_snippet_has_a_mirroring_test():
    missing = [m.name for m in MODULES if not (ROOT / "tests" / f"test_{m.name}").is_file()]
    assert missing == []


TOP_LEVEL = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


def top_level_problems(source: str) -> list[str]:
    """맨 위 수준에서 import할 때 무언가를 실행하거나 바꾸는 문장을 찾습니다.

    허용: import, 정의, 이름에 값을 대입하기, docstring, `if __name__ == "__main__":` 블록.
    `torch.backends.… = …`처럼 이름이 아닌 곳에 대입하는 문장은 전역 설정을 바꾸므로 막습니다.
    """
    problems = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'":
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not isinstance(node, TOP_LEVEL) or not all(
            isinstance(t, ast.Name) for t in targets if t is not None
        ):
            problems.append(ast.unparse(node).splitlines()[0])
    return problems


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_module_defines_main_under_a_guard(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "main" in names
    guard = tree.body[-1]
    assert isinstance(guard, ast.If) and "__main__" in ast.unparse(guard.test)
    assert top_level_problems(module.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "planted",
    [
        'torch.backends.cuda.matmul.fp32_precision = "tf32"\n',
        "torch.set_num_threads(1)\n",
        "for _ in range(2):\n    pass\n",
    ],
)
def test_top_level_check_can_fail(planted):
    source = (ROOT / "snippets" / "tip4_create_on_device.py").read_text(encoding="utf-8")
    assert top_level_problems(source) == []
    planted_source = source.replace("\n\n# --8<-- [start:article_2020]", "\n" + planted, 1)
    assert top_level_problems(planted_source)


# import 전후로 torch의 전역 설정을 읽고, import하는 동안 불린 torch 함수를 셉니다. 대입문 안의
# 계산(예: `WARM = torch.randn(…) @ …`)처럼 AST 규칙이 못 보는 것을 실제 실행으로 잡습니다.
IMPORT_PROBE = """
import importlib, json, os, sys, tempfile, torch
from torch.overrides import TorchFunctionMode

def settings():
    return {
        "matmul": torch.backends.cuda.matmul.fp32_precision,
        "cudnn": torch.backends.cudnn.conv.fp32_precision,
        "mkldnn": torch.backends.mkldnn.matmul.fp32_precision,
        "threads": torch.get_num_threads(),
        "dtype": str(torch.get_default_dtype()),
        "grad": torch.is_grad_enabled(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "benchmark": torch.backends.cudnn.benchmark,
    }

class Count(TorchFunctionMode):
    calls = []
    def __torch_function__(self, func, types, args=(), kwargs=None):
        Count.calls.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))

def printed_while(load, name):
    # print와 C 확장이 fd 1에 바로 쓰는 것을 모두 받도록 표준 출력 자체를 파일로 돌립니다.
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            load(name)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode(errors="replace")

import lightning  # noqa: F401  (라이브러리가 import할 때 하는 일은 세지 않습니다)
found = {}
for name in sys.argv[1:]:
    before, Count.calls = settings(), []
    with Count():
        printed = printed_while(importlib.import_module, name)
    found[name] = {"calls": Count.calls, "changed": before != settings(), "printed": printed}
print(json.dumps(found))
"""


def import_probe(*modules: str, cwd=ROOT) -> dict:
    """모듈마다 {calls: import하는 동안 불린 torch 함수, changed: 전역 설정이 바뀌었는지,
    printed: import하는 동안 표준 출력에 쓴 것}."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *modules],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def imports():
    return import_probe(*(f"snippets.{module.stem}" for module in MODULES))


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_importing_runs_no_torch_op_and_changes_no_global_setting(module, imports):
    found = imports[f"snippets.{module.stem}"]
    assert (found["calls"], found["changed"]) == ([], False)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_importing_prints_nothing(module, imports):
    assert imports[f"snippets.{module.stem}"]["printed"] == ""


def test_import_probe_can_fail(tmp_path):
    (tmp_path / "planted.py").write_text(
        "import os, torch\n"
        "WARM = torch.randn(8, 8) @ torch.randn(8, 8)\n"
        "torch.set_default_dtype(torch.float64)\n"
        "print('준비 중')\n"
        "os.write(1, b'C\\n')\n",
        encoding="utf-8",
    )
    found = import_probe("planted", cwd=tmp_path)["planted"]
    assert "randn" in found["calls"] and found["changed"]
    assert found["printed"] == "준비 중\nC\n"  # print와 fd 1에 바로 쓴 것 모두


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_cuda_request_on_a_cpu_machine_stops_with_korean_message(module, script_runs):
    code, out, err = script_runs[f"{module.relative_to(ROOT)} --device cuda"]
    assert code == 1 or "CUDA GPU가 필요합니다" in str(code)
    assert "CUDA GPU가 필요합니다" in err + str(code)
    assert "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_command_line_plumbing_lives_only_in_cli(module):
    # 명령줄과 장치 고르기는 snippets/_cli.py 하나에만 있습니다. 스니펫은 `__main__` 블록에서
    # 가져다 씁니다(노트북에는 hooks/notebooks.py가 그 함수를 넣습니다).
    tree = ast.parse(module.read_text(encoding="utf-8"))
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert not defined & {"pick_device", "make_parser", "KoreanParser", "KoreanFormatter"}
    guard = ast.unparse(tree.body[-1])
    assert "from _cli import" in guard


def test_pick_device_explains_bad_names_in_korean():
    assert CLI.pick_device("cpu").type == "cpu"
    with pytest.raises(SystemExit, match="알 수 없는 장치 이름"):
        CLI.pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
            CLI.pick_device("cuda:0")


# ---------------------------------------------------------------------------
# 명령줄: 도움말과 오류가 한국어인지, GPU 번호를 확인하는지
# ---------------------------------------------------------------------------

# argparse가 영어로 내는 낱말입니다. 한국어 도움말과 오류에는 하나도 없어야 합니다.
ENGLISH_ARGPARSE = ("usage:", "options:", "show this help", "error:", "unrecognized", "expected")

# 모든 모듈을 한 프로세스에서 스크립트로(`__main__`) 실행합니다. torch와 lightning을 한 번만
# import하므로 모듈마다 프로세스를 띄우는 것보다 훨씬 빠릅니다.
RUN_ALL_AS_SCRIPTS = """
import contextlib, io, json, runpy, sys, traceback
# `python snippets/x.py`처럼 스크립트의 폴더를 sys.path 맨 앞에 둡니다(`from _cli import …`).
sys.path.insert(0, "snippets")
results = {}
arguments, paths = json.loads(sys.argv[1]), sys.argv[2:]
for path in paths:
    for args in arguments:
        sys.argv = [path, *args]
        out, err, code = io.StringIO(), io.StringIO(), None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as stop:
                code = stop.code
            except BaseException:
                traceback.print_exc()
        results[f"{path} {' '.join(args)}"] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def script_runs():
    paths = [str(m.relative_to(ROOT)) for m in MODULES]
    arguments = [["--help"], ["--bogus"], ["--device"]]
    if not torch.cuda.is_available():  # GPU가 있으면 `--device cuda`는 예제를 정말 실행합니다.
        arguments.append(["--device", "cuda"])
    result = subprocess.run(
        [sys.executable, "-c", RUN_ALL_AS_SCRIPTS, json.dumps(arguments), *paths],
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_help_is_korean(module, script_runs):
    code, out, err = script_runs[f"{module.relative_to(ROOT)} --help"]
    assert (code, err) == (0, "")
    assert out.startswith(f"사용법: {module.name} [-h] [--device 장치]")
    for korean in ("옵션:", "이 도움말을 보여 주고 끝냅니다", "auto(기본값), cpu, cuda, cuda:번호"):
        assert korean in out
    assert not [word for word in ENGLISH_ARGPARSE if word in out]


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--bogus", "오류: 알 수 없는 옵션입니다: --bogus"),
        ("--device", "오류: --device: 값을 하나"),
    ],
)
def test_argparse_errors_are_korean(module, option, message, script_runs):
    code, out, err = script_runs[f"{module.relative_to(ROOT)} {option}"]
    assert (code, out) == (2, "")
    assert err.startswith("사용법: ")
    assert f"{module.name}: {message}" in err
    assert "Traceback" not in err
    assert not [word for word in ENGLISH_ARGPARSE if word in err]


def test_a_real_process_exits_with_korean_error_and_no_traceback():
    # 위의 빠른 검사(한 프로세스에서 runpy)가 진짜 실행과 같은지 한 모듈로 확인합니다.
    result = subprocess.run(
        [sys.executable, "snippets/tip4_create_on_device.py", "--devcie", "cpu"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "오류: 알 수 없는 옵션입니다: --devcie cpu" in result.stderr
    assert "Traceback" not in result.stderr


def test_make_parser_reads_the_device_and_rejects_abbreviations(capsys):
    parser = CLI.make_parser("설명")
    assert parser.parse_args([]).device == "auto"
    assert parser.parse_args(["--device=cuda:1"]).device == "cuda:1"
    # 줄임말(--dev)을 받으면 옵션이 늘어날 때 뜻이 바뀔 수 있어 받지 않습니다.
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--dev", "cpu"])
    assert stop.value.code == 2
    assert "오류: 알 수 없는 옵션입니다: --dev cpu" in capsys.readouterr().err


@pytest.fixture
def one_gpu(monkeypatch):
    """GPU가 하나 있는 컴퓨터처럼 보이게 합니다. torch.device()는 GPU 없이도 만들어집니다."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)


def test_pick_device_accepts_existing_gpu_numbers(one_gpu):
    assert CLI.pick_device("auto") == torch.device("cuda")
    assert CLI.pick_device("cuda") == torch.device("cuda")
    assert CLI.pick_device("cuda:0") == torch.device("cuda", 0)


@pytest.mark.parametrize("name", ["cuda:7", "cuda:1", "cuda:abc", "cuda:-1", "cuda:", "cuda:0x0"])
def test_pick_device_rejects_bad_gpu_numbers_in_korean(name, one_gpu):
    with pytest.raises(SystemExit) as stop:
        CLI.pick_device(name)
    message = str(stop.value.code)
    assert message.startswith(f"쓸 수 없는 GPU 번호입니다: {name.removeprefix('cuda:')!r}.")
    assert "GPU는 1개이고 번호는 0부터 0까지입니다" in message


def test_bad_gpu_number_on_the_command_line_exits_1_without_traceback():
    # GPU가 두 개인 컴퓨터에서 `--device cuda:abc`로 실행한 것과 같습니다.
    code = (
        "import runpy, sys, torch\n"
        "torch.cuda.is_available = lambda: True\n"
        "torch.cuda.device_count = lambda: 2\n"
        "sys.argv = ['tip4_create_on_device.py', '--device', 'cuda:abc']\n"
        "sys.path.insert(0, 'snippets')\n"
        "runpy.run_path('snippets/tip4_create_on_device.py', run_name='__main__')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert "쓸 수 없는 GPU 번호입니다: 'abc'." in result.stderr
    assert "GPU는 2개이고 번호는 0부터 1까지입니다" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------
# 스니펫에는 독자가 복사하는 코드만: 독자에게 쓸모없는 줄은 5% 이하, 같은 도우미는 한 번만
# ---------------------------------------------------------------------------

SNIPPETS = sorted(p for p in (ROOT / "snippets").glob("*.py") if p.name != "__init__.py")
EMBED = re.compile(r'--8<--\s+"snippets/(?P<file>[\w.]+\.py)(?::(?P<section>[\w-]+))?"')
MARKER = re.compile(r"--8<-- \[(?P<edge>start|end):(?P<name>[\w-]+)\]")
DEFINITIONS = (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


def embedded_sections(docs) -> dict[str, set[str | None]]:
    """{스니펫 파일 이름: 페이지가 끼워 넣는 구역들}. 파일 전체를 끼워 넣으면 None입니다."""
    found: dict[str, set[str | None]] = {}
    for page in docs.rglob("*.md"):
        for match in EMBED.finditer(page.read_text(encoding="utf-8")):
            found.setdefault(match["file"], set()).add(match["section"])
    return found


def section_ranges(source: str) -> dict[str, tuple[int, int]]:
    """{구역 이름: (시작 표시 줄, 끝 표시 줄)} (1부터 센 줄 번호)."""
    starts, ranges = {}, {}
    for number, line in enumerate(source.splitlines(), 1):
        if marker := MARKER.search(line):
            if marker["edge"] == "start":
                starts[marker["name"]] = number
            else:
                ranges[marker["name"]] = (starts[marker["name"]], number)
    return ranges


def defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {
        name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)
    }


def used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def code_lines(source: str, first: int, last: int) -> int:
    """first–last 줄 가운데 빈 줄과 주석만 있는 줄을 뺀 줄 수."""
    lines = source.splitlines()[first - 1 : last]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def unserved_definitions(  # noqa: C901 (정의가 쓰이는 길마다 한 갈래)
    sources: dict[str, str], embedded: dict[str, set]
) -> dict[str, int]:
    """페이지에도 없고 main()이나 페이지의 코드가 부르지도 않는 맨 위 정의: {"모듈:이름": 줄 수}.

    독자에게 쓸모 있는 정의: 페이지가 끼워 넣는 구역 안에 있거나, main()·`__main__` 블록·페이지에
    보이는 정의에서 이름으로(여러 단계를 거쳐) 닿는 정의. `__main__` 블록이 부르는 _cli.py의 함수도
    독자(스크립트로 실행하는 사람)가 씁니다.
    """
    unserved = {}
    cli_roots = set()
    for source in sources.values():
        guard = ast.parse(source).body[-1]
        if isinstance(guard, ast.If) and "__main__" in ast.unparse(guard.test):
            cli_roots |= used_names(guard)
    for name, source in sources.items():
        tree = ast.parse(source)
        definitions = [node for node in tree.body if isinstance(node, DEFINITIONS)]
        sections = embedded.get(name, set())
        ranges = section_ranges(source)
        if None in sections:  # 파일 전체를 끼워 넣는 페이지가 있습니다
            continue
        shown = [ranges[s] for s in sections if s in ranges]
        roots = {"main"} | (cli_roots if name == "_cli.py" else set())
        roots |= {
            n
            for node in tree.body
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
            for n in used_names(node)
        }
        by_name = {n: node for node in definitions for n in defined_names(node)}
        for node in definitions:
            if any(start < node.lineno and node.end_lineno < end for start, end in shown):
                roots |= defined_names(node) | used_names(node)
        reached, queue = set(), list(roots)
        while queue:
            current = queue.pop()
            if current in reached or current not in by_name:
                continue
            reached.add(current)
            queue.extend(used_names(by_name[current]))
        for node in definitions:
            if not defined_names(node) & (reached | roots):
                start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                label = ", ".join(sorted(defined_names(node)))
                unserved[f"{name}:{label}"] = code_lines(source, start, node.end_lineno)
    return unserved


def test_snippet_lines_that_serve_no_reader_are_at_most_5_percent():
    sources = {p.name: p.read_text(encoding="utf-8") for p in SNIPPETS}
    unserved = unserved_definitions(sources, embedded_sections(ROOT / "docs"))
    total = sum(code_lines(source, 1, len(source.splitlines())) for source in sources.values())
    share = sum(unserved.values()) / total
    offenders = ", ".join(f"{name}({lines}줄)" for name, lines in sorted(unserved.items()))
    assert share <= 0.05, f"{share:.1%} ({sum(unserved.values())}/{total}줄): {offenders}"


def test_unserved_line_check_can_fail():
    source = (
        "import torch\n\n\n"
        "# --8<-- [start:fast]\ndef fast(x):\n    return helper(x)\n# --8<-- [end:fast]\n\n\n"
        "def helper(x):\n    return x + 1\n\n\n"
        "def bench_only(x):\n    # 벤치마크만 씁니다\n    return x * 2\n\n\n"
        "TABLE = {'a': 1}\n\n\n"
        "def main():\n    print(fast(1))\n\n\n"
        'if __name__ == "__main__":\n    main()\n'
    )
    embedded = {"planted.py": {"fast"}}
    assert unserved_definitions({"planted.py": source}, embedded) == {
        "planted.py:bench_only": 2,
        "planted.py:TABLE": 1,
    }
    assert unserved_definitions({"planted.py": source}, {"planted.py": {None}}) == {}


def function_bodies(sources: dict[str, str]) -> dict[tuple[str, str], list[str]]:
    """{(함수 이름, docstring을 뺀 본문의 AST): 정의한 모듈들}. 메서드는 빼고 맨 위 함수만."""
    found: dict[tuple[str, str], list[str]] = {}
    for name, source in sources.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                body = node.body
                if (
                    body
                    and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                ):
                    body = body[1:]
                key = (node.name, ast.dump(ast.Module(body=body, type_ignores=[])))
                found.setdefault(key, []).append(name)
    return found


def repeated_helpers(sources: dict[str, str]) -> list[str]:
    return sorted(
        f"{name}: {', '.join(modules)}"
        for (name, _), modules in function_bodies(sources).items()
        if len(modules) > 1
    )


def test_no_helper_is_repeated_across_snippets():
    sources = {p.name: p.read_text(encoding="utf-8") for p in SNIPPETS}
    assert repeated_helpers(sources) == []


def test_repeated_helper_check_can_fail():
    helper = 'def sync(device):\n    """설명"""\n    if device.type == "cuda":\n        pass\n'
    other = 'def sync(device):\n    """다른 설명"""\n    if device.type == "cuda":\n        pass\n'
    assert repeated_helpers({"a.py": helper, "b.py": other}) == ["sync: a.py, b.py"]
    assert repeated_helpers({"a.py": helper, "b.py": other.replace("pass", "return")}) == []
