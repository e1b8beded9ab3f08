"""더 나아가기 13: 메모리. 큰 어휘의 손실을 조각으로 나눠 최대 메모리를 줄입니다.

언어 모델 학습에서 가장 큰 텐서는 보통 출력 계층의 로짓(토큰 수 × 어휘 크기)입니다. 손실을 토큰
조각마다 계산하고, 조각의 로짓은 저장하지 않고 역전파 때 다시 계산하면(체크포인팅) 한 번에 조각
하나의 로짓만 메모리에 있습니다. 값과 변화도는 한 번에 계산한 것과 같습니다.

실행: `python snippets/beyond_memory.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# --8<-- [end:imports]

# --8<-- [start:slow]
IGNORE = -100  # 패딩 자리의 정답: 손실에서 뺍니다.
CHUNKS = 16  # 토큰을 나눌 조각 수


def loss_all_at_once(hidden, weight, targets):
    """로짓(토큰 수 × 어휘)을 한 번에 만들어 교차 엔트로피를 계산하고 역전파합니다."""
    hidden.grad = weight.grad = None
    logits = hidden @ weight.T  # 가장 큰 텐서: 역전파를 위해 저장됩니다.
    loss = F.cross_entropy(logits, targets, ignore_index=IGNORE)
    loss.backward()
    return loss.detach()


# --8<-- [end:slow]


# --8<-- [start:fast]
def chunk_loss_sum(hidden_chunk, weight, targets_chunk):
    """조각 하나의 손실 합입니다. 평균은 조각이 아니라 배치 전체의 토큰 수로 냅니다."""
    logits = hidden_chunk @ weight.T
    return F.cross_entropy(logits, targets_chunk, ignore_index=IGNORE, reduction="sum")


def loss_in_chunks(hidden, weight, targets, chunks=CHUNKS):
    """토큰을 조각으로 나눠 손실을 계산하고 역전파합니다. 한 번에 조각 하나의 로짓만 있습니다.

    checkpoint는 조각의 로짓을 저장하지 않고 역전파 때 다시 계산합니다. 행렬 곱을 한 번 더 하는
    값을 치르고 메모리를 얻습니다.
    """
    hidden.grad = weight.grad = None
    total = sum(
        checkpoint(chunk_loss_sum, h, weight, t, use_reentrant=False)
        for h, t in zip(hidden.chunk(chunks), targets.chunk(chunks), strict=True)
    )
    # 조각마다 평균을 내면 패딩이 있을 때 틀립니다(변화도 누적 페이지와 같은 이유).
    loss = total / (targets != IGNORE).sum()
    loss.backward()
    return loss.detach()


# --8<-- [end:fast]


def make_inputs(device, tokens=256, d_model=32, vocab=1024, seed=0):
    """마지막 은닉 상태(토큰 × d_model), 출력 가중치(어휘 × d_model), 정답(일부는 패딩)입니다."""
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(tokens, d_model, generator=g).to(device).requires_grad_()
    weight = (torch.randn(vocab, d_model, generator=g) / d_model**0.5).to(device).requires_grad_()
    targets = torch.randint(0, vocab, (tokens,), generator=g)
    targets[torch.rand(tokens, generator=g) < 0.2] = IGNORE  # 토큰의 약 1/5은 패딩
    return hidden, weight, targets.to(device)


def logits_mib(tokens, vocab, bytes_per_value=4):
    """한 번에 만드는 로짓 텐서의 크기(MiB)입니다. 역전파에서 같은 크기의 변화도가 더 생깁니다."""
    return tokens * vocab * bytes_per_value / 2**20


# --8<-- [start:gpu]
def require_cuda():
    if not torch.cuda.is_available():
        raise RuntimeError(
            "이 함수는 CUDA GPU가 필요합니다. torch.cuda.is_available()가 False입니다: "
            "GPU가 있는 컴퓨터에서 CUDA 빌드의 torch로 실행하세요."
        )


def cuda_peak_mib(fn, *args):
    """fn(*args) 한 번의 최대 할당(allocated)과 최대 예약(reserved)을 MiB로 돌려줍니다.

    allocated는 텐서가 실제로 쓴 양, reserved는 PyTorch의 캐싱 할당기가 드라이버에서 받아 둔
    양입니다. 둘의 차이가 크면 조각난 메모리(fragmentation)가 많다는 뜻입니다.
    """
    require_cuda()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn(*args)
    torch.cuda.synchronize()
    return {
        "allocated": torch.cuda.max_memory_allocated() / 2**20,
        "reserved": torch.cuda.max_memory_reserved() / 2**20,
    }


def record_memory_snapshot(fn, *args, path="memory_snapshot.pickle", max_entries=100_000):
    """fn(*args)의 할당과 해제를 스택과 함께 기록해 path에 씁니다.

    이 파일을 https://pytorch.org/memory_viz 에 끌어다 놓으면 시간에 따른 메모리와 각 할당을 만든
    코드를 볼 수 있습니다(파일은 브라우저 안에서만 읽힙니다).
    """
    require_cuda()
    torch.cuda.memory._record_memory_history(max_entries=max_entries)
    try:
        fn(*args)
    finally:
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)  # 기록을 끕니다.
    return path


# --8<-- [end:gpu]


def main(device="cpu"):
    from torch.utils.benchmark import Timer

    device = torch.device(device)
    tokens, vocab = 2048, 8192
    print(f"장치: {device}, 토큰 {tokens}개, 어휘 {vocab}, 조각 {CHUNKS}개")
    print(f"한 번에 만드는 로짓: {logits_mib(tokens, vocab):.0f} MiB")
    for fn in (loss_all_at_once, loss_in_chunks):
        args = make_inputs(device, tokens=tokens, vocab=vocab)
        loss = fn(*args)
        seconds = Timer("f(*a)", globals={"f": fn, "a": args}).timeit(3).median
        line = f"{fn.__name__}: 손실 {loss.item():.4f}, {seconds * 1e3:.1f} ms"
        if device.type == "cuda":
            peak = cuda_peak_mib(fn, *args)
            line += f", 최대 할당 {peak['allocated']:.0f} MiB, 최대 예약 {peak['reserved']:.0f} MiB"
        print(line)


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 13: 메모리"))
