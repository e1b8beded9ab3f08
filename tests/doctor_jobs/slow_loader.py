"""심어 둔 문제: CPU를 많이 쓰는 데이터셋을 `num_workers=0`으로 읽습니다(팁 1)."""

import torch
from torch.utils.data import DataLoader, Dataset


class HeavyDataset(Dataset):
    """샘플마다 진짜 계산(작은 행렬 곱을 여러 번)을 합니다: 시계를 바쁘게 기다리지 않습니다."""

    def __init__(self, length=160, size=64):
        self.length, self.size = length, size

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        a = torch.randn(self.size, self.size, generator=generator)
        for _ in range(120):
            a = torch.tanh(a @ a.T / self.size)
        return a.flatten()[:32], a.sum().reshape(1)


def main(context=None):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    loader = DataLoader(HeavyDataset(), batch_size=8, shuffle=True, num_workers=0)  # PLANT
    model = torch.nn.Linear(32, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, fused=True)
    total = torch.zeros(())
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach()
    print(f"{total.item():.6f}")


if __name__ == "__main__":
    main()
