"""심어 둔 문제: LightningModule의 training_step에서 스텝마다 `.item()`(팁 3)."""

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)
        self.seen = []

    def training_step(self, batch, batch_index):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.seen.append(loss.item())  # PLANT
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, fused=True)


def main():
    L.seed_everything(0, verbose=False)
    data = TensorDataset(torch.randn(192, 8), torch.randn(192, 1))
    trainer = L.Trainer(
        max_steps=12,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = Regression()
    trainer.fit(model, DataLoader(data, batch_size=16))
    print(" ".join(f"{v:.5f}" for v in model.seen))


if __name__ == "__main__":
    main()
