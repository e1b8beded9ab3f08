"""spawn으로 띄운 DataLoader 워커가 이 스크립트에 정의한 Dataset 클래스를 찾아야 합니다."""

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, index):
        return torch.tensor([float(index)]), torch.tensor([float(index * index)])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Squares(), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, fused=True)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("done", torch.cat([p.detach().flatten() for p in model.parameters()]).tolist())
