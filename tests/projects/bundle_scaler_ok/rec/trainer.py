"""The trainer keeps the scaler it hands the bundle (``self.scaler = scaler`` beside
``OptimizerBundle(model, cfg, scaler)``): its update follows the bundle's steps."""
import torch
import torch.nn.functional as F

from .optim import OptimizerBundle


class Trainer:
    def __init__(self, model, cfg, scaler):
        self.model = model
        self.cfg = cfg
        self.scaler = scaler
        self.bundle = OptimizerBundle(model, cfg, scaler)

    def train_step(self, dense, sparse, labels):
        self.bundle.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.model(dense, sparse)
        loss = F.binary_cross_entropy_with_logits(logits.float(), labels)
        self.scaler.scale(loss).backward()
        norms = self.bundle.step()
        self.scaler.update()
        return loss.detach(), norms


def main(model, cfg, loader):
    scaler = torch.amp.GradScaler("cuda")
    trainer = Trainer(model, cfg, scaler)
    for dense, sparse, labels in loader:
        trainer.train_step(dense, sparse, labels)


def main_inline(model, cfg, loader):
    # the scaler built in the constructor call: the trainer's and the bundle's are one object
    trainer = Trainer(model, cfg, torch.amp.GradScaler("cuda"))
    for dense, sparse, labels in loader:
        trainer.train_step(dense, sparse, labels)
