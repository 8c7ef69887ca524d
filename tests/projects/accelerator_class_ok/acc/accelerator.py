"""An accelerate-style class of the project: its ``backward`` scales, and the optimizers its
``prepare`` hands out step (and update) through its scaler."""
import torch


class WrappedOptimizer:
    def __init__(self, optimizer, scaler):
        self.optimizer, self.scaler = optimizer, scaler

    def step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def zero_grad(self):
        self.optimizer.zero_grad()


class Accelerator:
    def __init__(self, mixed_precision="no"):
        self.scaler = torch.amp.GradScaler("cuda") if mixed_precision == "fp16" else None

    def prepare(self, model, optimizer):
        return model, WrappedOptimizer(optimizer, self.scaler)

    def backward(self, loss):
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
