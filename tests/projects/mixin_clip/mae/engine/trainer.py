import torch.nn as nn

from .base import BaseTrainer


class ClipGradMixin:
    max_grad_norm: float = 0.0

    def optimizer_step(self):
        if self.max_grad_norm > 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)  # error: AMP002
        super().optimizer_step()


class MAETrainer(ClipGradMixin, BaseTrainer):
    def __init__(self, model, optimizer, cfg):
        super().__init__(model, optimizer, cfg)
        self.max_grad_norm = cfg.clip_grad
