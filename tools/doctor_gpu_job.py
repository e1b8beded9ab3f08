"""GPU 점검용 작은 작업: 합성곱(cudnn.benchmark, channels_last), fp32 행렬 곱(TF32),
스텝마다 `.item()`, 짧은 커널이 많은 작은 MLP. tools/gpu_check.sh가 torchdoctor로 돌립니다."""

import torch

torch.manual_seed(0)
device = "cuda"
conv = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(16 * 32 * 32, 1024),
    torch.nn.Linear(1024, 10),
).to(device)
optimizer = torch.optim.AdamW(conv.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,))),
    batch_size=32,
)
for _epoch in range(2):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.cross_entropy(conv(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"{loss.item():.4f}")
