"""더 나아가기 7: `torch.backends.cudnn.benchmark = True`로 합성곱 알고리즘을 자동으로 고릅니다.

모양이 고정된 입력에서는 처음 한 번 여러 알고리즘을 재 보고 가장 빠른 것을 계속 씁니다.
모양이 계속 바뀌면 새 모양마다 다시 재느라 오히려 느려집니다. cuDNN(NVIDIA GPU)에만 있는
설정이라 CPU에서는 아무 일도 하지 않습니다.

실행: `python snippets/beyond_cudnn_benchmark.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
from torch import nn
from torch.utils.benchmark import Timer

# --8<-- [end:imports]


# --8<-- [start:model]
def conv_net(channels=32, num_layers=4):
    """3×3 합성곱 → BatchNorm → ReLU를 쌓은 작은 합성곱 신경망입니다."""
    layers = [nn.Conv2d(3, channels, 3, padding=1, bias=False)]
    for _ in range(num_layers - 1):
        layers += [
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
        ]
    return nn.Sequential(*layers)


def train_step(model, x):
    """순전파와 역전파 한 번입니다. 합성곱마다 출력, 입력 변화도, 가중치 변화도를 계산합니다."""
    model.zero_grad(set_to_none=True)
    out = model(x)
    out.float().square().mean().backward()
    return out


# --8<-- [end:model]


# --8<-- [start:slow]
def steps_default(model, batches):
    """기본 설정(benchmark=False)으로 학습합니다. cuDNN이 경험 규칙으로 알고리즘을 고릅니다."""
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = False
    try:
        return [train_step(model, x) for x in batches]
    finally:
        torch.backends.cudnn.benchmark = previous


# --8<-- [end:slow]


# --8<-- [start:fast]
def steps_benchmark(model, batches):
    """benchmark=True로 학습합니다. 새 입력 모양을 처음 볼 때마다 알고리즘을 재 보고 고릅니다.

    보통은 학습 스크립트 맨 위에 `torch.backends.cudnn.benchmark = True` 한 줄을 둡니다.
    여기서는 비교를 위해 이 함수 안에서만 켜고 되돌립니다.
    """
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        return [train_step(model, x) for x in batches]
    finally:
        torch.backends.cudnn.benchmark = previous


# --8<-- [end:fast]


# --8<-- [start:shapes]
def fixed_batches(device, count, batch=8, size=64, seed=0):
    """모두 같은 모양의 배치입니다. 알고리즘 탐색은 처음 한 번만 일어납니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(batch, 3, size, size, device=device, generator=g) for _ in range(count)]


def changing_batches(device, count, batch=8, size=64, start=0, widen=1, seed=0):
    """배치마다 높이와 너비가 다른 배치입니다(가변 길이 음성, 원본 크기 이미지처럼).

    높이는 size+start, size+start+1, …로 늘고 너비는 높이+widen입니다. start를 바꾸면 쓴 적 없는
    모양이 나오고, widen이 다르면 두 목록의 모양이 절대 겹치지 않습니다.
    """
    g = torch.Generator(device=device).manual_seed(seed)
    heights = [size + start + i for i in range(count)]
    return [torch.randn(batch, 3, h, h + widen, device=device, generator=g) for h in heights]


# --8<-- [end:shapes]


def make_inputs(device, channels=16, num_layers=3, seed=0):
    """같은 seed면 같은 가중치의 합성곱 신경망을 장치에 만듭니다."""
    torch.manual_seed(seed)
    return conv_net(channels, num_layers).to(device)


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


def make_parser(description):
    """명령줄 옵션 파서를 만듭니다. argparse의 영어 안내와 오류를 한국어로 바꿉니다."""
    import argparse
    import sys

    class KoreanFormatter(argparse.HelpFormatter):
        def add_usage(self, usage, actions, groups, prefix=None):
            super().add_usage(usage, actions, groups, "사용법: ")

    class KoreanParser(argparse.ArgumentParser):
        def error(self, message):
            # 이 예제의 옵션에서 날 수 있는 오류만 옮깁니다. 그 밖의 오류는 원문 그대로 둡니다.
            for english, korean in [
                ("unrecognized arguments", "알 수 없는 옵션입니다"),
                ("expected one argument", "값을 하나 주어야 합니다"),
                ("ignored explicit argument", "값을 받지 않는 옵션입니다. 받은 값:"),
            ]:
                message = message.replace(english, korean)
            self.print_usage(sys.stderr)
            self.exit(2, f"{self.prog}: 오류: {message.removeprefix('argument ')}\n")

    parser = KoreanParser(
        description=description, formatter_class=KoreanFormatter, add_help=False, allow_abbrev=False
    )
    parser._optionals.title = "옵션"  # argparse가 만드는 영어 제목("options")을 바꿉니다.
    parser.add_argument("-h", "--help", action="help", help="이 도움말을 보여 주고 끝냅니다")
    parser.add_argument(
        "--device", default="auto", metavar="장치", help="auto(기본값), cpu, cuda, cuda:번호"
    )
    return parser


def main(device_name="auto"):
    device = pick_device(device_name)
    cuda = device.type == "cuda"
    channels, size = (64, 128) if cuda else (16, 32)
    model = make_inputs(device, channels=channels)
    print(f"장치: {device}, 채널 {channels}, 입력 {size}×{size}부터")
    fixed = fixed_batches(device, 10, size=size)
    for label, steps in {
        "benchmark=False": steps_default,
        "benchmark=True": steps_benchmark,
    }.items():
        steps(model, fixed[:1])  # 워밍업: benchmark=True는 여기서 알고리즘을 고릅니다.
        timer = Timer("f(m, b)", globals={"f": steps, "m": model, "b": fixed})
        per_step = timer.blocked_autorange(min_run_time=0.3).median / len(fixed)
        print(f"고정된 모양, {label}: 스텝당 {per_step * 1e3:.2f} ms")
    for offset, (label, steps) in enumerate(
        {"benchmark=False": steps_default, "benchmark=True": steps_benchmark}.items()
    ):
        # 두 설정 모두 처음 보는 모양 5개씩을 받습니다(서로 겹치지 않게 widen을 다르게).
        changing = changing_batches(device, 5, size=size, start=1, widen=1 + offset)
        timer = Timer("f(m, b)", globals={"f": steps, "m": model, "b": changing})
        per_step = timer.timeit(1).median / len(changing)
        print(f"바뀌는 모양, {label}: 스텝당 {per_step * 1e3:.2f} ms (모양마다 첫 실행)")
    if not cuda:
        print("CPU에는 cuDNN이 없어서 benchmark 설정이 아무 일도 하지 않습니다.")
        print("위의 차이는 측정 오차입니다. GPU에서 `--device cuda`로 실행해 보세요.")


if __name__ == "__main__":
    parser = make_parser("더 나아가기 7: cudnn.benchmark")
    main(parser.parse_args().device)
