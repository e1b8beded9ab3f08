"""심어 둔 문제: `model.eval()` 뒤 평가를 변화도 기록을 켠 채로 돌립니다(평가 페이지)."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)
x, y = torch.randn(32, 8), torch.randn(32, 1)
for _epoch in range(3):
    model.train()
    for _step in range(4):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    for _batch in range(2):
        prediction = model(x[:8])  # PLANT
