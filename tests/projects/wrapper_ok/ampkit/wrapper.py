import torch


class AmpOptimizerWrapper:
    """The framework owns the scaler: callers only call backward() and step()."""

    def __init__(self, optimizer, max_norm=1.0):
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.max_norm = max_norm

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def step(self, params):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(params, self.max_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
