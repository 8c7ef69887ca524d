import torch
import torch.nn.functional as F
from torch.amp import GradScaler


class AcceleratedOptimizer:
    """A wrapper forwarding an optional closure: nothing goes wrong with the default None."""

    def __init__(self, optimizer, scaler: GradScaler = None):
        self.optimizer = optimizer
        self.scaler = scaler

    def step(self, closure=None):
        if self.scaler is not None:
            self.scaler.step(self.optimizer, closure)
            self.scaler.update()
        else:
            self.optimizer.step(closure)


class ClosureGradScaler(GradScaler):
    """A subclass that implements closure support itself."""

    def step(self, optimizer, *args, **kwargs):
        closure = kwargs["closure"]
        return optimizer.step(closure=closure)


def train_custom(model, optimizer, loader, use_closures):
    scaler = ClosureGradScaler("cuda") if use_closures else GradScaler("cuda")
    for x, y in loader:

        def closure():
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            return loss

        scaler.step(optimizer, closure=closure)
        scaler.update()


def train_plain_closure(model, loader):
    """A closure optimizer without a scaler: no GradScaler involved."""
    optimizer = torch.optim.LBFGS(model.parameters())
    for x, y in loader:

        def closure():
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss

        optimizer.step(closure)


def train(model, optimizer, loader):
    scaler = GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer, None)
        scaler.update()
