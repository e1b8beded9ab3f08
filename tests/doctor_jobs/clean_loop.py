"""사이트를 따른 깨끗한 작업: 메모리에 있는 데이터(워커가 필요 없는 로더), 장치에서 만든 텐서,
융합 옵티마이저, autocast, SDPA, autograd 없는 평가, 손실은 장치에 모았다가 끝에 한 번 읽습니다.
어떤 규칙에도 걸리지 않아야 합니다."""

import torch
from torch.utils.data import DataLoader, TensorDataset


class Attention(torch.nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = (
            heads,
            torch.nn.Linear(dim, 3 * dim),
            torch.nn.Linear(dim, dim),
        )

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


def main():
    torch.manual_seed(0)
    device = "cpu"
    data = TensorDataset(torch.randn(256, 32, 64), torch.randn(256, 32, 64))
    loader = DataLoader(data, batch_size=16)  # 이미 메모리에 있는 텐서: 워커가 할 일이 없습니다
    model = Attention().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    losses = torch.zeros(0, device=device)
    for _epoch in range(2):
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            noise = torch.randn(x.shape, device=device) * 0.01
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = torch.nn.functional.mse_loss(model(x + noise).float(), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses = torch.cat([losses, loss.detach()[None]])
        model.eval()
        with torch.inference_mode():
            model(data.tensors[0][:16].to(device))
    print(" ".join(f"{v:.5f}" for v in losses.tolist()))


if __name__ == "__main__":
    main()
