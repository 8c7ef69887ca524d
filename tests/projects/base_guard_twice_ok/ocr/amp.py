import torch

from .base import BaseTrainer


class AmpTrainer(BaseTrainer):
    """Unscales under the same setting that guards the base class's clip: the clip never sees
    scaled gradients."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def before_optimizer_step(self):
        if self.max_grad_norm:
            self.scaler.unscale_(self.optimizer)
        super().before_optimizer_step()

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
