"""심어 둔 문제: `nn.DataParallel`(팁 5). GPU가 없으면 DataParallel은 모듈을 그대로 부릅니다."""

import torch

torch.manual_seed(0)
model = torch.nn.DataParallel(torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)
x, y = torch.randn(32, 8), torch.randn(32, 1)
for _step in range(12):
    loss = torch.nn.functional.mse_loss(model(x), y)  # PLANT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
