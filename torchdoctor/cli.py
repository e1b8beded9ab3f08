"""`python -m torchdoctor [옵션] train.py [스크립트 인자…]`와 `torchdoctor` 명령.

작업이 도는 동안에는 작업의 출력만 나옵니다. 보고서는 끝에 표준 오류로 한 번 씁니다
(작업의 표준 출력은 진단기가 없을 때와 바이트까지 같습니다).
"""

from __future__ import annotations

import argparse
import os
import sys

USAGE = "python -m torchdoctor [옵션] 스크립트.py [스크립트 인자 …]"


class KoreanParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"torchdoctor: 명령 인자가 잘못되었습니다: {message}\n")


def make_parser() -> argparse.ArgumentParser:
    parser = KoreanParser(
        prog="torchdoctor",
        usage=USAGE,
        add_help=False,
        description=(
            "내 PyTorch 학습 스크립트를 그대로 돌려, 어느 팁이 내 작업에서 값을 하는지 재어"
            " 알려 줍니다."
        ),
    )
    parser.add_argument("-h", "--help", action="help", help="이 도움말을 보여 주고 끝냅니다")
    parser.add_argument(
        "--skip-steps",
        type=non_negative,
        default=5,
        metavar="N",
        help="재지 않고 건너뛸 처음 스텝 수(컴파일, 워커 시작; 기본 5)",
    )
    parser.add_argument(
        "--steps", type=positive, default=20, metavar="N", help="시간을 재는 창의 스텝 수(기본 20)"
    )
    parser.add_argument(
        "--probe-steps",
        type=positive,
        default=2,
        metavar="N",
        help="호출을 세는 탐침 스텝 수(시간 창 밖, 기본 2)",
    )
    parser.add_argument("--json", metavar="PATH", help="보고서를 JSON으로 씁니다")
    parser.add_argument(
        "--no-fix", action="store_true", help="작업이 끝난 뒤 고친 것을 재지 않습니다(보고서만)"
    )
    parser.add_argument(
        "--fix-budget",
        type=float,
        default=20.0,
        metavar="초",
        help="고친 것을 재는 데 쓸 시간(초, 측정마다; 기본 20)",
    )
    parser.add_argument("script", metavar="스크립트.py", help="돌릴 학습 스크립트")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="스크립트에 그대로 넘길 인자")
    return parser


def non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("0 이상의 정수여야 합니다")
    return value


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("1 이상의 정수여야 합니다")
    return value


def say(message: str) -> None:
    print(f"torchdoctor: {message}", file=sys.stderr, flush=True)


def job_summary(outcome, report) -> str:
    steps = report["steps"]
    if outcome.status == "raised":
        return (
            f"작업이 {type(outcome.error).__name__}로 멈췄습니다(위의 traceback은 작업의 것입니다)."
            f" 그때까지 스텝 {steps['seen']}개를 봤고, 시간 창에서 {steps['window']}개를 쟀습니다."
        )
    if outcome.status == "interrupted":
        return (
            f"Ctrl-C로 멈췄습니다. 그때까지 스텝 {steps['seen']}개를 봤습니다. 잰 것만 보고합니다."
        )
    return ""


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (끝나는 방식마다 종료 코드 하나)
    options = make_parser().parse_args(argv)
    if not os.path.isfile(options.script):
        say(f"스크립트 파일을 찾을 수 없습니다: {options.script}")
        return 2
    try:
        from torchdoctor import doctor as doctor_module
        from torchdoctor import runner
    except ImportError as error:
        say(f"torch를 가져오지 못했습니다({error}). 학습 환경의 파이썬으로 실행하세요.")
        return 2
    try:
        code_error = None
        runner.load_code(options.script)
    except SyntaxError as error:
        code_error = error
    if code_error is not None:
        say(f"스크립트를 파이썬 코드로 읽을 수 없습니다: {code_error}")
        return 2
    doctor = doctor_module.Doctor(
        skip_steps=options.skip_steps,
        steps=options.steps,
        probe_steps=options.probe_steps,
        measure_fixes=not options.no_fix,
        fix_budget_s=options.fix_budget,
        script=os.path.basename(options.script),
    )
    try:
        outcome = runner.run_script(options.script, options.args, doctor)
    except (
        Exception
    ) as error:  # 작업의 예외는 run_script가 받으므로 여기 오는 것은 진단기의 것입니다
        say(f"진단기를 준비하지 못했습니다: {type(error).__name__}: {error}")
        return 3
    sys.stdout.flush()
    try:
        report = doctor.report()
    except KeyboardInterrupt:
        say("보고서를 만드는 중에 Ctrl-C로 멈췄습니다.")
        return 130
    except Exception as error:  # 진단기의 실패는 한 줄로: 작업의 결과를 가리지 않습니다
        say(f"보고서를 만들지 못했습니다(진단기의 오류): {type(error).__name__}: {error}")
        return outcome.exit_code or 3
    summary = job_summary(outcome, report)
    if summary:
        say(summary)
    sys.stderr.write(str(report))
    if options.json:
        try:
            written = report.json(options.json)
        except OSError as error:
            say(f"JSON을 쓰지 못했습니다: {options.json}: {error.strerror}")
            return outcome.exit_code or 2
        say(f"보고서를 JSON으로 썼습니다: {written}")
    return outcome.exit_code
