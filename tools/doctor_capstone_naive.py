"""'전부 합치면'의 기준 단계(팁을 하나도 쓰지 않은 GPT)를 CPU에서 몇 스텝 학습합니다.

사이트의 "내 학습 진단하기" 페이지에 싣는 보고서는 이 작업을 torchdoctor로 돌려 씁니다:
    python -m torchdoctor --skip-steps 2 --steps 10 --json results/doctor/capstone-naive.json \\
        tools/doctor_capstone_naive.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from snippets.capstone_gpt import GPTConfig, Stage, make_job, train_steps  # noqa: E402

if __name__ == "__main__":
    torch.set_num_threads(2)
    cfg = GPTConfig(500, 32, 2, 2, 64)  # 스니펫의 CPU 시연과 같은 작은 모델
    job = make_job(Stage(), cfg, torch.device("cpu"), batch_size=4)
    print(f"마지막 손실 {train_steps(job, 20):.4f}")
    job.close()
