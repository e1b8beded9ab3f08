"""심어 둔 문제: 이상 탐지를 켠 채 학습합니다(평가 페이지의 디버깅 도구)."""

import torch

torch.autograd.set_detect_anomaly(True)  # PLANT
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)
x, y = torch.randn(32, 8), torch.randn(32, 1)
for _step in range(12):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
