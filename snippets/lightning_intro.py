"""PyTorch Lightning 소개: 같은 모델을 순수 PyTorch 루프와 LightningModule + Trainer로
학습합니다.

두 방식은 같은 순서로 같은 계산을 하므로, 같은 시드에서 시작하면 학습이 끝난 가중치도 같습니다.
실행: `python snippets/lightning_intro.py [--device auto|cpu|cuda]`
"""

# --8<-- [start:imports]
# --8<-- [start:lightning_import]
import lightning as L

# --8<-- [end:lightning_import]
# --8<-- [start:torch_imports]
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

# --8<-- [end:torch_imports]
# --8<-- [end:imports]


# --8<-- [start:data]
def make_dataset(samples=512, features=20, classes=3, seed=0):
    """선형 규칙으로 정답을 정한 분류 데이터를 만듭니다."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, features, generator=generator)
    rule = torch.randn(features, classes, generator=generator)
    return TensorDataset(x, (x @ rule).argmax(dim=1))


def make_model(features=20, classes=3, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))


# --8<-- [end:data]


# --8<-- [start:pytorch]
def train_plain_pytorch(model, loader, epochs, device):
    """학습 루프, 장치 이동, 역전파, 옵티마이저 호출을 모두 직접 씁니다."""
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


# --8<-- [end:pytorch]


# --8<-- [start:lightning]
class LitClassifier(L.LightningModule):
    """연구 코드(모델, 손실, 옵티마이저)만 남기고 나머지는 Trainer에 맡깁니다."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def train_lightning(model, loader, epochs, accelerator="auto"):
    """장치 이동, 루프, zero_grad/backward/step은 Trainer가 합니다."""
    trainer = L.Trainer(
        max_epochs=epochs,
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(LitClassifier(model), loader)
    return model


# --8<-- [end:lightning]


def accuracy(model, dataset):
    """학습한 모델이 데이터를 얼마나 맞히는지 CPU에서 셉니다."""
    x, y = dataset.tensors
    with torch.no_grad():
        return (model.cpu()(x).argmax(dim=1) == y).float().mean().item()


def main(device="cpu", epochs=2):
    device = torch.device(device)
    dataset = make_dataset()
    plain = train_plain_pytorch(make_model(), DataLoader(dataset, batch_size=32), epochs, device)
    lit = train_lightning(make_model(), DataLoader(dataset, batch_size=32), epochs, device.type)
    same = all(
        torch.allclose(a.cpu(), b.cpu(), atol=1e-6)
        for a, b in zip(plain.state_dict().values(), lit.state_dict().values(), strict=True)
    )
    print(f"장치: {device}, 에폭: {epochs}")
    print(f"순수 PyTorch 정확도: {accuracy(plain, dataset):.3f}")
    print(f"Lightning 정확도:    {accuracy(lit, dataset):.3f}")
    print("두 방식의 학습된 가중치가 " + ("같습니다." if same else "다릅니다!"))


if __name__ == "__main__":
    from _cli import device_from_command_line  # 명령줄과 장치 고르기(snippets/_cli.py)

    main(device_from_command_line("순수 PyTorch와 Lightning으로 같은 모델 학습하기"))
