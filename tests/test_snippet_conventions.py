"""모든 스니펫 모듈이 지키는 약속: import할 때 아무것도 실행하지 않고, 스크립트로 실행하면
`--device cuda`를 GPU 없는 컴퓨터에서 한국어 메시지와 종료 코드 1로 거절합니다."""

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p for p in (ROOT / "snippets").glob("*.py") if p.name != "__init__.py")


def test_every_snippet_has_a_mirroring_test():
    missing = [m.name for m in MODULES if not (ROOT / "tests" / f"test_{m.name}").is_file()]
    assert missing == []


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_module_defines_main_under_a_guard_and_runs_nothing_at_import(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "main" in names
    guard = tree.body[-1]
    assert isinstance(guard, ast.If) and "__main__" in ast.unparse(guard.test)
    # 맨 위 수준에는 import, 정의, 상수 대입, `__main__` guard만 있습니다. 함수 호출문은 없습니다.
    # (tip5는 lightning을 import하기 전에 환경 변수를 확인하는 guard를 맨 위에 하나 더 둡니다.)
    calls = [
        ast.unparse(n)
        for n in tree.body[:-1]
        if isinstance(n, ast.Expr | ast.If | ast.For)
        and not (isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'")
    ]
    assert [c for c in calls if not c.startswith(('"""', "'"))] == []


def test_importing_every_snippet_prints_nothing():
    code = "; ".join(f"import snippets.{m.stem}" for m in MODULES)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA가 없는 컴퓨터에서만 확인합니다")
@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_cuda_request_on_a_cpu_machine_stops_with_korean_message(module):
    result = subprocess.run(
        [sys.executable, str(module.relative_to(ROOT)), "--device", "cuda"],
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "CUDA GPU가 필요합니다" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("function", ["pick_device", "make_parser"])
def test_every_module_carries_the_same_copy(function):
    # 모듈마다 혼자 읽히고 복사되도록 pick_device와 make_parser를 일부러 각 모듈에 둡니다. 대신
    # 서로 달라지지 않게, 모든 사본이 글자 하나까지 같은지 확인합니다.
    copies = set()
    for module in MODULES:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
        assert len(found) == 1, module.name
        copies.add(ast.unparse(found[0]))
    assert len(copies) == 1


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_pick_device_explains_bad_names_in_korean(module):
    snippet = importlib.import_module(f"snippets.{module.stem}")
    assert snippet.pick_device("cpu").type == "cpu"
    with pytest.raises(SystemExit, match="알 수 없는 장치 이름"):
        snippet.pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match="CUDA GPU가 필요합니다"):
            snippet.pick_device("cuda:0")


# ---------------------------------------------------------------------------
# 명령줄: 도움말과 오류가 한국어인지, GPU 번호를 확인하는지
# ---------------------------------------------------------------------------

# argparse가 영어로 내는 낱말입니다. 한국어 도움말과 오류에는 하나도 없어야 합니다.
ENGLISH_ARGPARSE = ("usage:", "options:", "show this help", "error:", "unrecognized", "expected")

# 모든 모듈을 한 프로세스에서 스크립트로(`__main__`) 실행합니다. torch와 lightning을 한 번만
# import하므로 모듈마다 프로세스를 띄우는 것보다 훨씬 빠릅니다.
RUN_ALL_AS_SCRIPTS = """
import contextlib, io, json, runpy, sys, traceback
results = {}
for path in sys.argv[1:]:
    for args in (["--help"], ["--bogus"], ["--device"]):
        sys.argv = [path, *args]
        out, err, code = io.StringIO(), io.StringIO(), None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as stop:
                code = stop.code
            except BaseException:
                traceback.print_exc()
        results[f"{path} {args[0]}"] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def script_runs():
    paths = [str(m.relative_to(ROOT)) for m in MODULES]
    result = subprocess.run(
        [sys.executable, "-c", RUN_ALL_AS_SCRIPTS, *paths],
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
    snippet = importlib.import_module("snippets.tip4_create_on_device")
    parser = snippet.make_parser("설명")
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


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_pick_device_accepts_existing_gpu_numbers(module, one_gpu):
    snippet = importlib.import_module(f"snippets.{module.stem}")
    assert snippet.pick_device("auto") == torch.device("cuda")
    assert snippet.pick_device("cuda") == torch.device("cuda")
    assert snippet.pick_device("cuda:0") == torch.device("cuda", 0)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
@pytest.mark.parametrize("name", ["cuda:7", "cuda:1", "cuda:abc", "cuda:-1", "cuda:", "cuda:0x0"])
def test_pick_device_rejects_bad_gpu_numbers_in_korean(module, name, one_gpu):
    snippet = importlib.import_module(f"snippets.{module.stem}")
    with pytest.raises(SystemExit) as stop:
        snippet.pick_device(name)
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
