import torch

from .amp import AmpMixin
from .base import EngineBase


class DetEngine(AmpMixin, EngineBase):
    def __init__(self, model, optimizer, amp=True):
        super().__init__(model, optimizer)
        self.init_amp(amp)

    def forward_loss(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.model(batch)

    def after_backward(self):
        # runs between the mixin's scaled backward and its unscale_: the norm is S times too large
        norms = [p.grad.norm() for p in self.model.parameters() if p.grad is not None]  # error: AMP002
        self.storage["grad_norm"] = float(torch.stack(norms).norm())
