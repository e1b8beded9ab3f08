"""옵티마이저 스텝이 없는 스크립트(추론만)."""

import torch

model = torch.nn.Linear(4, 1)
with torch.inference_mode():
    print(model(torch.ones(2, 4)).shape)
