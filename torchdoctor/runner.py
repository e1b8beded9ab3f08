"""독자의 스크립트를 `python -m cProfile`처럼 돌립니다.

`__name__ == "__main__"`, 스크립트가 보는 `sys.argv`, `sys.path[0]`은 스크립트의 폴더.
`sys.modules["__main__"]`을 스크립트의 모듈로 바꿔 두므로, spawn으로 띄운 DataLoader 워커가
스크립트에 정의한 Dataset 클래스를 찾습니다(워커는 부모의 `__main__.__file__`을 다시 읽습니다).
"""

from __future__ import annotations

import os
import sys
import traceback
import types
from dataclasses import dataclass

from torchdoctor import where


@dataclass
class Outcome:
    status: str  # finished | exited | raised | interrupted
    exit_code: int
    error: BaseException | None = None


def load_code(path: str):
    with open(path, "rb") as handle:
        return compile(handle.read(), path, "exec")


def main_module(path: str) -> types.ModuleType:
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__builtins__ = __builtins__
    module.__spec__ = None  # spawn이 이름 대신 경로(__file__)로 스크립트를 다시 읽게 합니다
    module.__loader__ = None
    return module


def exit_code_of(error: SystemExit) -> int:
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # 파이썬이 sys.exit("글")을 처리하는 방식 그대로
    return 1


def print_job_traceback(error: BaseException) -> None:
    """작업의 traceback을 파이썬이 찍는 모양으로 찍습니다. 앞쪽의 torchdoctor 프레임은 뺍니다."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(where.HERE):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)


def run_code(code, module) -> Outcome:
    """스크립트의 코드를 돌리고 어떻게 끝났는지 돌려줍니다.

    작업의 예외는 작업의 것으로 보여 줍니다."""
    try:
        exec(code, module.__dict__)
    except SystemExit as error:
        return Outcome("exited", exit_code_of(error))
    except KeyboardInterrupt as error:
        return Outcome("interrupted", 130, error)
    except BaseException as error:  # 작업의 예외는 작업의 것: 그대로 보여 줍니다
        print_job_traceback(error)
        return Outcome("raised", 1, error)
    return Outcome("finished", 0)


def run_script(path: str, argv: list[str], doctor) -> Outcome:
    """스크립트를 doctor 안에서 돌립니다. 끝나면 sys.argv, sys.path, __main__을 되돌립니다."""
    full = os.path.abspath(path)
    code = load_code(full)
    module = main_module(full)
    doctor.start()  # 진단기의 준비가 실패하면 작업의 오류가 아니라 진단기의 오류로 올라갑니다
    saved = sys.argv[:], sys.path[:], sys.modules.get("__main__")
    sys.argv[:] = [path, *argv]  # 파이썬처럼 명령줄에 적은 그대로
    sys.path.insert(0, os.path.dirname(full))
    sys.modules["__main__"] = module
    try:
        outcome = run_code(code, module)
        doctor.outcome = outcome.status
        return outcome
    finally:
        doctor.stop()
        sys.argv[:], sys.path[:] = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
