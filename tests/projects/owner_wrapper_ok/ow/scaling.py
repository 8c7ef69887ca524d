import torch


class ScaledOptimizer:
    """Owns the GradScaler: ``backward`` scales, ``step`` unscales, steps and updates."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def step(self):
        self.scaler.unscale_(self.optimizer)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
