"""심어 둔 문제: softmax를 두 행렬 곱 사이에 손으로 쓴 어텐션(SDPA 페이지)."""

import math

import torch


class HandAttention(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        return self.out(weights @ v)  # PLANT


torch.manual_seed(0)
model = HandAttention()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
x = torch.randn(4, 8, 16)
for _step in range(12):
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
