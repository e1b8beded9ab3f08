"""더 나아가기 3: 융합(fused) 옵티마이저로 옵티마이저 스텝을 줄입니다.

같은 AdamW 스텝을 세 가지 구현으로 돌립니다. 가중치마다 연산을 하나씩 부르는 for-loop(CPU의 기본값),
가중치 목록 전체에 연산을 묶어 부르는 foreach(CUDA의 기본값), 갱신 전체를 dtype·장치 묶음마다
커널 몇 개로 하는 fused입니다.

실행: `python snippets/beyond_fused_optimizers.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
import torch

# --8<-- [end:imports]
from torch.utils.benchmark import Timer


# --8<-- [start:params]
def make_inputs(device, num_tensors=64, numel=4096, dtype=torch.float32, seed=0):
    """변화도까지 채운 가중치 텐서 목록을 만듭니다. 작은 텐서가 많을수록 구현 차이가 큽니다."""
    g = torch.Generator(device=device).manual_seed(seed)
    params = []
    for _ in range(num_tensors):
        p = torch.randn(numel, device=device, dtype=dtype, generator=g).requires_grad_()
        p.grad = torch.randn(numel, device=device, dtype=dtype, generator=g)
        params.append(p)
    return params


# --8<-- [end:params]


# --8<-- [start:slow]
def make_adamw_for_loop(params, lr=1e-3):
    """가중치마다 연산을 따로 부릅니다. CPU에서는 아무것도 지정하지 않은 AdamW가 이것입니다."""
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.1, foreach=False)


# --8<-- [end:slow]


# --8<-- [start:foreach]
def make_adamw_foreach(params, lr=1e-3):
    """가중치 목록 전체에 _foreach_ 연산을 부릅니다. CUDA에서 옵션이 없으면 이것입니다."""
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.1, foreach=True)


# --8<-- [end:foreach]


# --8<-- [start:fast]
def make_adamw_fused(params, lr=1e-3):
    """갱신 전체(모멘트, 편향 보정, 가중치 감쇠, 갱신)를 한 번에 합니다.

    가중치를 dtype과 장치로 묶어 묶음마다 fused 연산을 한 번 부릅니다.
    torch 2.13은 CPU도 지원합니다.
    """
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.1, fused=True)


# --8<-- [end:fast]


# --8<-- [start:default]
def default_implementation(params):
    """옵션 없이 만든 옵티마이저가 이 장치에서 고를 구현: "fused", "foreach" 또는 "for-loop"."""
    from torch.optim.optimizer import _default_to_fused_or_foreach

    fused, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
    return "fused" if fused else "foreach" if foreach else "for-loop"


# --8<-- [end:default]

# 구현 이름 → 옵티마이저를 만드는 함수. main()이 세 구현을 차례로 잴 때 씁니다.
OPTIMIZERS = {
    "for-loop": make_adamw_for_loop,
    "foreach": make_adamw_foreach,
    "fused": make_adamw_fused,
}


def run_steps(optimizer, steps=3):
    """변화도는 그대로 두고 옵티마이저 스텝만 여러 번 부릅니다."""
    for _ in range(steps):
        optimizer.step()


def adamw_bytes_per_step(params):
    """AdamW 한 스텝이 읽고 쓰는 바이트의 하한입니다.

    읽기: 가중치, 변화도, 1차·2차 모멘트(4개). 쓰기: 가중치, 1차·2차 모멘트(3개).
    """
    return 7 * sum(p.numel() * p.element_size() for p in params)


def main(device="cpu"):
    device = torch.device(device)
    params = make_inputs(device)
    total = sum(p.numel() for p in params)
    default = default_implementation(params)
    print(f"장치: {device}, 가중치 텐서 {len(params)}개, 원소 {total:,}개")
    print(f"옵션 없이 만든 AdamW가 이 장치에서 쓰는 구현: {default}")
    baseline = None
    # 이 장치의 기본 구현을 먼저 재서 기준으로 삼습니다(CPU는 for-loop, CUDA는 foreach).
    order = [default] + [name for name in OPTIMIZERS if name != default]
    for name in order:
        make = OPTIMIZERS[name]
        params = make_inputs(device)  # 구현마다 같은 가중치, 같은 변화도에서 출발합니다.
        optimizer = make(params)
        run_steps(optimizer, 1)  # 첫 스텝은 모멘트 텐서를 만드느라 느리므로 시간에서 뺍니다.
        timer = Timer("optimizer.step()", globals={"optimizer": optimizer})
        seconds = timer.blocked_autorange(min_run_time=0.3).median
        baseline = baseline or seconds
        print(
            f"{name:>8}: 스텝 {seconds * 1e3:.3f} ms, "
            f"{adamw_bytes_per_step(params) / seconds / 1e9:.1f} GB/s "
            f"(기본 구현 {default} 대비 {baseline / seconds:.2f}배)"
        )


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("더 나아가기 3: 융합(fused) 옵티마이저"))
