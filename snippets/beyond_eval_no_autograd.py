"""더 나아가기: autograd 없이 평가하기, 그리고 켜 둔 채 잊은 디버깅 도구의 비용.

평가(검증)에는 역전파가 없으므로 autograd가 그래프를 만들고 활성값을 저장할 이유가 없습니다.
`torch.inference_mode()`(또는 `torch.no_grad()`) 안에서 평가합니다. 디버깅용 도구인
이상 탐지(`torch.autograd.set_detect_anomaly(True)`)와 프로파일러는 학습 코드에 남겨 두면 매
스텝 비용을 냅니다.

실행: `python snippets/beyond_eval_no_autograd.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:setup]
def make_model(features=64, hidden=128, layers=3, classes=10, dropout=0.1, dtype=torch.float32):
    """드롭아웃이 있는 MLP 분류기입니다. 드롭아웃은 eval()을 잊었는지 드러내 줍니다."""
    torch.manual_seed(0)
    blocks = []
    width = features
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, hidden), torch.nn.GELU(), torch.nn.Dropout(dropout)]
        width = hidden
    return torch.nn.Sequential(*blocks, torch.nn.Linear(width, classes)).to(dtype)


def make_inputs(batches=4, batch_size=32, features=64, classes=10, dtype=torch.float32, seed=1):
    """(입력, 정답) 배치의 목록입니다."""
    g = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randn(batch_size, features, generator=g, dtype=dtype),
            torch.randint(0, classes, (batch_size,), generator=g),
        )
        for _ in range(batches)
    ]


# --8<-- [end:setup]


# --8<-- [start:slow]
def evaluate_with_autograd(model, batches):
    """autograd를 켠 채 평가합니다. 배치마다 그래프를 만들고 역전파용 활성값을 저장합니다.

    손실을 텐서 그대로 더하면 모든 배치의 그래프가 평가가 끝날 때까지 살아 있습니다.
    """
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for x, y in batches:
        logits = model(x)
        total_loss = total_loss + F.cross_entropy(logits, y, reduction="sum")
        correct = correct + (logits.argmax(dim=1) == y).sum()
        count += len(y)
    return total_loss / count, correct / count


# --8<-- [end:slow]


# --8<-- [start:fast]
@torch.inference_mode()
def evaluate(model, batches):
    """inference_mode 안에서 평가합니다. 그래프도, 저장하는 활성값도, 버전 카운터도 없습니다.

    inference_mode는 model.eval()을 부르지 않습니다. 드롭아웃과 배치 정규화를 평가 동작으로
    바꾸려면 eval()을 따로 불러야 합니다.
    """
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for x, y in batches:
        logits = model(x)
        total_loss = total_loss + F.cross_entropy(logits, y, reduction="sum")
        correct = correct + (logits.argmax(dim=1) == y).sum()
        count += len(y)
    return total_loss / count, correct / count


@torch.no_grad()
def evaluate_no_grad(model, batches):
    """no_grad 안에서 평가합니다. 결과 텐서를 나중에 autograd 계산에 써야 한다면 이쪽입니다."""
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for x, y in batches:
        logits = model(x)
        total_loss = total_loss + F.cross_entropy(logits, y, reduction="sum")
        correct = correct + (logits.argmax(dim=1) == y).sum()
        count += len(y)
    return total_loss / count, correct / count


# --8<-- [end:fast]


# --8<-- [start:pitfall]
@torch.inference_mode()
def evaluate_forgot_eval(model, batches):
    """흔한 실수: inference_mode만 쓰고 model.eval()을 잊었습니다. 드롭아웃이 켜져 있습니다."""
    total_loss, count = 0.0, 0
    for x, y in batches:
        total_loss = total_loss + F.cross_entropy(model(x), y, reduction="sum")
        count += len(y)
    return total_loss / count


# --8<-- [end:pitfall]


# --8<-- [start:debug]
def train_steps(model, optimizer, batches):
    """평범한 학습 스텝들입니다(기준)."""
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.detach()


def train_steps_with_anomaly_detection(model, optimizer, batches):
    """이상 탐지를 켠 학습: 순전파의 연산마다 호출 위치(traceback)를 저장하고, 역전파에서
    변화도에 NaN이 생기는지 검사합니다. 어디서 NaN이 났는지 찾을 때만 씁니다."""
    with torch.autograd.set_detect_anomaly(True):
        return train_steps(model, optimizer, batches)


def train_steps_with_profiler(model, optimizer, batches):
    """프로파일러를 켜 둔 학습: 모든 연산을 기록하고, 끝날 때 기록을 정리합니다."""
    with torch.profiler.profile():
        return train_steps(model, optimizer, batches)


# --8<-- [end:debug]


def seconds(fn, *args, number=None):
    """fn(*args) 한 번의 중앙값 시간(초)입니다. Timer는 CUDA를 동기화합니다.

    number를 주면 그 횟수만 돌립니다(워밍업 2번 더): 프로파일러는 켤 때마다 stderr에 기록 줄을
    남기므로 횟수를 줄입니다.
    """
    timer = Timer("fn(*args)", globals={"fn": fn, "args": args})
    if number:
        return timer.timeit(number).median
    return timer.blocked_autorange(min_run_time=0.3).median


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}")
    model = make_model(features=128, hidden=256, layers=3).to(device)
    batches = [(x.to(device), y.to(device)) for x, y in make_inputs(4, 64, features=128)]
    slow_loss, slow_acc = evaluate_with_autograd(model, batches)
    fast_loss, fast_acc = evaluate(model, batches)
    print(
        f"평가 결과: autograd를 켠 채 손실 {slow_loss.item():.6f}, "
        f"inference_mode 손실 {fast_loss.item():.6f} (정확도 {fast_acc.item():.3f}로 같음)"
    )
    for label, fn in [
        ("autograd를 켠 채", evaluate_with_autograd),
        ("no_grad", evaluate_no_grad),
        ("inference_mode", evaluate),
    ]:
        print(f"  {label}: {seconds(fn, model, batches) * 1e3:.1f} ms")
    model.train()  # 학습하던 모델을 그대로 평가에 넘긴 상황입니다.
    forgot = evaluate_forgot_eval(model, batches).item()
    print(
        f"eval()을 잊은 평가의 손실 {forgot:.6f}: 드롭아웃 때문에 위 값과 다르고, 매번 달라집니다."
    )

    print("학습 스텝에 디버깅 도구를 켜 둔 비용:")
    small = make_model(features=64, hidden=128, layers=6).to(device)
    optimizer = torch.optim.SGD(small.parameters(), lr=0.01)
    train_batches = [(x.to(device), y.to(device)) for x, y in make_inputs(4, 32)]
    base = seconds(train_steps, small, optimizer, train_batches, number=3)
    print("  (프로파일러는 켤 때마다 stderr에 profiler_start/profiler_stop 줄을 남깁니다)")
    for label, fn in [
        ("set_detect_anomaly(True)", train_steps_with_anomaly_detection),
        ("torch.profiler.profile()", train_steps_with_profiler),
    ]:
        cost = seconds(fn, small, optimizer, train_batches, number=3)
        print(f"  {label}: 끈 학습의 {cost / base:.1f}배 시간")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 10: autograd 없이 평가하기"))
