import torch

from .base import Trainer


class ClippingTrainer(Trainer):
    def before_optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)  # error: AMP002


class NoUpdateTrainer(Trainer):
    def optimizer_step(self):
        self.scaler.step(self.optimizer)  # error: AMP001


class PlainBackwardTrainer(Trainer):
    def training_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x, y)
        loss.backward()  # error: AMP004
        return loss
