"""The update lives in a hook the trainer runs after each step, from a list the caller builds."""
from typing import Sequence

import torch
from torch.amp import GradScaler as GS

from .hooks import Hook, LossScaleHook, ThroughputHook


class MTTrainer:
    def __init__(self, model, optimizer, scaler: GS, hooks: Sequence[Hook] = ()):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.hooks = list(hooks)

    def train_epoch(self, itr):
        self.model.train()
        for sample in itr:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(sample["src"].cuda(), sample["prev"].cuda(), sample["target"].cuda())
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.optimizer)
            self.optimizer.zero_grad(set_to_none=True)
            for h in self.hooks:
                h.after_train_iter(self, ntokens=sample["ntokens"])


def main(model, itr, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=7e-4)
    scaler = GS("cuda", init_scale=128.0)
    trainer = MTTrainer(model, optimizer, scaler, hooks=[LossScaleHook(), ThroughputHook()])
    for _ in range(epochs):
        trainer.train_epoch(itr)
