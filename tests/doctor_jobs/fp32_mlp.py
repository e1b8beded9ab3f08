"""심어 둔 문제: autocast 없는 fp32 행렬 곱이 스텝을 차지하는 MLP(팁 6). 옵티마이저는 기본 경로
(융합 옵티마이저 페이지)."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512),
    torch.nn.ReLU(),
    torch.nn.Linear(512, 512),
    torch.nn.ReLU(),
    torch.nn.Linear(512, 256),
)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # PLANT: fused 없음
x = torch.randn(512, 256)
for _step in range(12):
    loss = model(x).pow(2).mean()  # PLANT: fp32 행렬 곱
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
