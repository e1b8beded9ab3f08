"""재는 조건: 한 라운드의 최소 시간, GPU를 기다리는 타이머, torch 스레드 수.

pytest-benchmark는 CUDA를 동기화하지 않습니다. GPU 작업은 비동기라서 그대로 재면 커널을 "넣는"
시간만 잽니다. 이 타이머는 시계를 읽기 전에 GPU가 끝나기를 기다리므로, 한 라운드의 시작과 끝이
모두 실제 GPU 작업의 경계가 됩니다.
"""

import argparse
import os
import time

import torch

MIN_ROUND_S = {"cuda": 0.002, "cpu": 0.02}  # docs/method.md가 같은 값을 말합니다(테스트가 확인)
CPU_THREADS = 1  # torch.utils.benchmark.Timer의 기본값과 같습니다(docs/method.md#threads)


def synchronized_perf_counter() -> float:
    torch.cuda.synchronize()
    return time.perf_counter()


def benchmark_settings(device: torch.device) -> dict:
    """pytest-benchmark의 benchmark 표시에 넘길 값: 한 라운드의 최소 시간과 타이머."""
    kind = "cuda" if device.type == "cuda" else "cpu"
    settings = {"min_time": MIN_ROUND_S[kind], "warmup": False}
    if device.type == "cuda":
        settings["timer"] = synchronized_perf_counter
    return settings


def use_threads(requested: int | None, device: torch.device) -> None:
    """잴 때의 torch 스레드 수를 정합니다. CPU는 따로 주지 않으면 1개, GPU는 torch의 기본값입니다.

    다른 프로그램이 코어 하나를 쓰면 여러 스레드로 나눈 연산은 가장 늦은 스레드를 기다리느라
    두 방식이 같은 만큼 늦어지고 배수가 1 쪽으로 끌려갑니다. 스레드가 하나면 남은 코어에서 돕니다.
    """
    threads = requested or (CPU_THREADS if device.type == "cpu" else None)
    if threads is None:
        return
    torch.set_num_threads(threads)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # spawn으로 띄우는 프로세스(DDP 순위)도 같게


def positive_int(text: str) -> int:
    """--threads의 값: 1 이상의 정수. 아니면 argparse가 이 한국어 이유로 멈춥니다."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"1 이상의 정수여야 합니다: {text!r}")
    return value
