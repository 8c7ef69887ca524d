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
        self.storage["scale"] = self.scaler.get_scale()
