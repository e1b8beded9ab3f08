"""학습 도중(스텝 몇 개 뒤) 작업 자신의 예외로 멈춥니다."""

import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)


def broken_step(step):
    if step == 3:
        raise ValueError("작업의 오류입니다")


for step in range(10):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    broken_step(step)
