"""스니펫을 스크립트로 실행할 때의 명령줄과 장치 고르기입니다.

페이지의 코드가 아니라 `python snippets/<모듈>.py --device cuda`처럼 실행할 때만 쓰는 배관이라서
모든 스니펫이 이 파일 하나를 함께 씁니다. 스니펫의 `__main__` 블록이 `from _cli import …`로
가져오고(스크립트로 실행하면 이 폴더가 sys.path의 맨 앞입니다), 내려받는 노트북에는
hooks/notebooks.py가 이 파일의 함수를 그대로 넣어 노트북이 혼자 실행되게 합니다.
"""

import argparse
import sys

import torch


def pick_device(name="auto"):
    """장치를 고릅니다. 쓸 수 없는 장치를 요청하면 한국어 메시지를 남기고 멈춥니다(종료 코드 1)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name != "cpu" and name != "cuda" and not name.startswith("cuda:"):
        raise SystemExit(
            f"알 수 없는 장치 이름입니다: {name!r}. auto, cpu, cuda, cuda:번호 중 하나를 쓰세요."
        )
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("이 예제는 CUDA GPU가 필요합니다. 이 컴퓨터에서는 CUDA를 찾지 못했습니다.")
    if name.startswith("cuda:"):
        # torch.device("cuda:7")은 GPU가 하나여도 통과하고, 쓰는 순간에야 영어 오류로 멈춥니다.
        index, found = name.removeprefix("cuda:"), torch.cuda.device_count()
        if not (index.isascii() and index.isdigit() and int(index) < found):
            raise SystemExit(
                f"쓸 수 없는 GPU 번호입니다: {index!r}. "
                f"이 컴퓨터의 GPU는 {found}개이고 번호는 0부터 {found - 1}까지입니다."
            )
        return torch.device("cuda", int(index))
    return torch.device(name)


class _KoreanFormatter(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "사용법: ")


class _KoreanParser(argparse.ArgumentParser):
    def error(self, message):
        # 스니펫의 옵션에서 날 수 있는 오류만 옮깁니다. 그 밖의 오류는 원문 그대로 둡니다.
        for english, korean in [
            ("unrecognized arguments", "알 수 없는 옵션입니다"),
            ("expected one argument", "값을 하나 주어야 합니다"),
            ("ignored explicit argument", "값을 받지 않는 옵션입니다. 받은 값:"),
            ("invalid int value", "정수가 아닙니다"),
            ("invalid choice", "고를 수 없는 값입니다"),
            ("choose from", "고를 수 있는 값:"),
        ]:
            message = message.replace(english, korean)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: 오류: {message.removeprefix('argument ')}\n")


def make_parser(description):
    """`--device`를 받는 명령줄 파서. argparse의 영어 안내와 오류를 한국어로 바꿉니다."""
    parser = _KoreanParser(
        description=description,
        formatter_class=_KoreanFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    parser._optionals.title = "옵션"  # argparse가 만드는 영어 제목("options")을 바꿉니다.
    parser.add_argument("-h", "--help", action="help", help="이 도움말을 보여 주고 끝냅니다")
    parser.add_argument(
        "--device", default="auto", metavar="장치", help="auto(기본값), cpu, cuda, cuda:번호"
    )
    return parser


def positive_int(text):
    """1 이상의 정수만 받는 argparse 형식입니다(예: 학습 스텝 수)."""
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"1 이상의 정수가 아닙니다: {text!r}")
    return int(text)


def device_from_command_line(description):
    """`--device`만 받는 스니펫의 명령줄을 읽고 장치를 고릅니다."""
    return pick_device(make_parser(description).parse_args().device)
