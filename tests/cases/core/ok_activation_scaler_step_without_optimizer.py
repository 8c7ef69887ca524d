"""Quantisation-aware training keeps an activation-range tracker as ``self.scaler``; its
``step()`` takes no optimizer, so it is not a GradScaler, even where the object is reached
through ``model.modules()`` and called under ``no_grad``."""
import torch
from torch import nn


class RangeTracker(nn.Module):
    def __init__(self, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_max", torch.ones(()))

    def scale(self, x):
        return x / self.running_max.clamp(min=1e-6)

    def update(self, x):
        self.running_max.mul_(1 - self.momentum).add_(self.momentum * x.detach().abs().max())

    def step(self):
        self.running_max.clamp_(max=1e4)


class QuantBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.scaler = RangeTracker()

    def forward(self, x):
        if self.training:
            self.scaler.update(x)
        return self.conv(self.scaler.scale(x))


@torch.no_grad()
def calibrate(model, loader):
    model.train()
    for x, _ in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            model(x)
    for m in model.modules():
        if isinstance(m, QuantBlock):
            m.scaler.step()
    model.eval()
