"""끝나지 않는 학습: Ctrl-C(SIGINT)로 멈춥니다. 준비되면 표준 출력에 ready를 씁니다."""

import sys

import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, fused=True)
step = 0
while True:
    model(torch.randn(8, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    step += 1
    if step == 40:
        print("ready", flush=True)
        sys.stdout.flush()
