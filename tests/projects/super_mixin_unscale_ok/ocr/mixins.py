"""A clipping mixin written for trainers that do not unscale themselves."""
import torch


class GradClipMixin:
    max_grad_norm = 5.0

    def clip_gradients(self):
        self.scaler.unscale_(self.optimizer)
        return torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
