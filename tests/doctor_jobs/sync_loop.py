"""심어 둔 문제: 보통 학습 루프에서 스텝마다 `.item()`과 `if 텐서`(팁 3)."""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)
x, y = torch.randn(64, 8), torch.randn(64, 1)
for step in range(12):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    value = loss.item()  # PLANT: item
    if loss > 100:  # PLANT: bool
        break
    print(f"{step} {value:.6f}")
