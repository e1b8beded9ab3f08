"""모든 스니펫 모듈이 지키는 약속: import할 때 아무것도 실행하지 않고, 스크립트로 실행하면
`--device cuda`를 GPU 없는 컴퓨터에서 한국어 메시지와 종료 코드 1로 거절합니다."""

import ast
import importlib
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
    # 맨 위 수준에는 import, 정의, 상수 대입, 마지막 guard만 있습니다. 함수 호출문은 없습니다.
    calls = [ast.unparse(n) for n in tree.body[:-1] if isinstance(n, ast.Expr | ast.If | ast.For)]
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


def test_every_module_carries_the_same_pick_device():
    # 모듈마다 혼자 읽히고 복사되도록 pick_device를 일부러 각 모듈에 둡니다. 대신 서로 달라지지
    # 않게, 모든 사본이 글자 하나까지 같은지 확인합니다.
    copies = set()
    for module in MODULES:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pick_device"]
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
