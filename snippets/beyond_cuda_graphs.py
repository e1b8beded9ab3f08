"""더 나아가기 2: CUDA 그래프(CUDA Graphs)로 커널 실행 비용을 줄입니다.

작은 커널이 많은 모델은 GPU가 계산하는 시간보다 CPU가 커널을 하나씩 실행(launch)하는 시간이
더 깁니다. CUDA 그래프는 커널 순서를 한 번 기록해 두고 한 번의 호출로 통째로 재생합니다.
`torch.compile(mode="reduce-overhead")`가 이것을 자동으로 해 줍니다. 대신 출력 텐서를 다음 재생이
덮어쓰므로, 여러 스텝의 출력을 모아 둘 때는 복사해야 합니다.

실행: `python snippets/beyond_cuda_graphs.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch
import torch.nn.functional as F
from torch import nn

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:model]
def make_model(d_model=256, num_layers=8, device="cuda", seed=0):
    """작은 Linear와 GELU를 여러 층 쌓은 모델입니다. 계층마다 커널이 몇 개씩 실행됩니다."""
    torch.manual_seed(seed)
    layers = []
    for _ in range(num_layers):
        layers += [nn.Linear(d_model, d_model), nn.GELU()]
    return nn.Sequential(*layers).to(device).eval()


def make_inputs(device, batch_size=16, d_model=256, num_layers=8, num_batches=4, seed=0):
    """(모델, 입력 배치 목록)을 만듭니다. 같은 seed면 같은 가중치와 같은 배치입니다."""
    model = make_model(d_model, num_layers, device, seed)
    g = torch.Generator(device=device).manual_seed(seed)
    batches = [
        torch.randn(batch_size, d_model, device=device, generator=g) for _ in range(num_batches)
    ]
    return model, batches


def require_cuda(device):
    """CUDA 그래프는 GPU 전용입니다. CPU면 아무것도 실행하지 않고 한국어 메시지로 멈춥니다."""
    if torch.device(device).type != "cuda":
        raise SystemExit(
            "이 예제는 CUDA GPU가 필요합니다. CUDA 그래프는 GPU 커널의 실행 순서를 기록해 "
            "재생하는 기능이라 CPU에는 없습니다."
        )


# --8<-- [end:model]


# --8<-- [start:slow]
def compile_default(model):
    """기본 모드로 컴파일합니다. 커널은 융합되지만 여전히 하나씩 실행(launch)합니다."""
    require_cuda(next(model.parameters()).device)
    return torch.compile(model)


# --8<-- [end:slow]


# --8<-- [start:fast]
def compile_reduce_overhead(model):
    """mode="reduce-overhead": 컴파일한 커널들을 CUDA 그래프로 기록해 한 번에 재생합니다."""
    require_cuda(next(model.parameters()).device)
    return torch.compile(model, mode="reduce-overhead")


# --8<-- [end:fast]


# --8<-- [start:pitfall]
@torch.no_grad()
def predict_all(model, batches):
    """배치마다 출력을 모읍니다. reduce-overhead 모델이면 앞 출력이 다음 재생에 덮어써집니다."""
    return [model(x) for x in batches]


@torch.no_grad()
def predict_all_safe(model, batches):
    """새 스텝의 시작을 알리고, 모아 둘 출력은 복사합니다. 어떤 모델에서나 결과가 같습니다."""
    outputs = []
    for x in batches:
        torch.compiler.cudagraph_mark_step_begin()
        outputs.append(model(x).clone())
    return outputs


# --8<-- [end:pitfall]


# --8<-- [start:training]
def train_with_cuda_graphs(model, optimizer, batches, targets):
    """reduce-overhead로 학습합니다. 손실 값은 복사해 모아 돌려줍니다.

    CUDA 그래프로 재생하는 것은 컴파일한 모델의 순전파와 역전파입니다. optimizer.step()은 그래프
    밖에서 평소처럼 커널을 하나씩 실행합니다(옵티마이저 스텝까지 컴파일하지 않는 한).
    """
    require_cuda(next(model.parameters()).device)
    compiled = torch.compile(model, mode="reduce-overhead")
    losses = []
    for x, y in zip(batches, targets, strict=True):
        torch.compiler.cudagraph_mark_step_begin()  # 반복마다 한 번: 새 스텝이 시작됩니다.
        loss = F.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach().clone())  # 다음 재생이 덮어쓰기 전에 복사해 둡니다.
    return losses


# --8<-- [end:training]


# --8<-- [start:manual]
def capture_cuda_graph(model, example):
    """torch.cuda.graph로 직접 기록합니다. 돌려주는 run(x)은 언제나 같은 출력 텐서를 돌려줍니다."""
    require_cuda(example.device)
    static_x = example.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):  # 기록 전에 별도 스트림에서 워밍업합니다(작업 공간 할당 등).
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_y = model(static_x)

    def run(x):
        static_x.copy_(x)  # 입력은 기록한 그 메모리에 복사해 넣습니다.
        graph.replay()
        return static_y  # 다음 run이 이 텐서를 소리 없이 덮어씁니다.

    return run


# --8<-- [end:manual]


def main(device="cpu"):
    device = torch.device(device)
    print(f"장치: {device}")
    if device.type != "cuda":
        print("CUDA 그래프는 GPU 전용이라 이 장치에는 해당하지 않습니다.")
        print("CPU에서는 커널을 실행(launch)하는 비용이 따로 없고, reduce-overhead 모드도 CUDA")
        print("그래프 없이 기본 모드처럼 컴파일합니다. `--device cuda`로 GPU에서 실행하세요.")
        return
    model, batches = make_inputs(device)
    with torch.no_grad():
        expected = [model(x) for x in batches]
    variants = {
        "eager": model,
        "compile 기본": compile_default(model),
        "reduce-overhead": compile_reduce_overhead(model),
        "torch.cuda.graph 직접": capture_cuda_graph(model, batches[0]),
    }
    x = batches[0]
    for name, fn in variants.items():
        outputs = predict_all_safe(fn, batches)  # 컴파일과 기록은 여기서 끝납니다.
        error = max((o - e).abs().max().item() for o, e in zip(outputs, expected, strict=True))
        with torch.no_grad():
            seconds = Timer("f(x)", globals={"f": fn, "x": x}).blocked_autorange().median
        print(f"{name:>22}: 배치 하나 {seconds * 1e6:.1f} µs, eager와 최대 차이 {error:.1e}")
    kept = predict_all(variants["reduce-overhead"], batches)
    try:
        kept[0].sum()
        print("덮어쓴 출력을 읽었는데도 오류가 나지 않았습니다.")
    except RuntimeError as error:
        print(f"모아 둔 앞 출력 읽기: RuntimeError: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 2: CUDA 그래프"))
