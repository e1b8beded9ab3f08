"""심어 둔 문제: 스텝마다 호스트에서 만든 텐서를 장치로 옮깁니다(팁 4)."""

import torch

torch.manual_seed(0)
device = "cpu"
model = torch.nn.Linear(16, 16).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, fused=True)
for _step in range(12):
    x = torch.randn(32, 16).to(device)  # PLANT
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
