import torch

from .amp import AmpTrainer


class Im2LatexTrainer(AmpTrainer):
    def compute_loss(self, batch):
        return self.model(batch)


def main(model, loader, epochs, max_grad_norm):
    optimizer = torch.optim.AdamW(model.parameters())
    trainer = Im2LatexTrainer(model, optimizer, max_grad_norm=max_grad_norm, accum_steps=2)
    trainer.fit(loader, epochs)
