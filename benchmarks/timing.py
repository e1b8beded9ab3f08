"""GPU 시간을 제대로 재는 타이머입니다.

pytest-benchmark는 CUDA를 동기화하지 않습니다. GPU 작업은 비동기라서 그대로 재면 커널을 "넣는"
시간만 잽니다. 이 타이머는 시계를 읽기 전에 GPU가 끝나기를 기다리므로, 한 라운드의 시작과 끝이
모두 실제 GPU 작업의 경계가 됩니다.
"""

import time

import torch


def synchronized_perf_counter() -> float:
    torch.cuda.synchronize()
    return time.perf_counter()
