import torch

from .base import Trainer


class ClippingTrainer(Trainer):
    def before_optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)


class WarmupTrainer(Trainer):
    def optimizer_step(self):
        super().optimizer_step()
        self.warmed = True


class LoggingTrainer(Trainer):
    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        print("stepped")
