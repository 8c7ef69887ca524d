import torch


class OptimizerWrapper:
    """Steps through a scaler it was handed; the owner updates it."""

    def __init__(self, optimizer, grad_scaler):
        self.optimizer = optimizer
        self.grad_scaler = grad_scaler

    def step(self):
        self.grad_scaler.step(self.optimizer)
        self.optimizer.zero_grad()


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    wrapped = OptimizerWrapper(optimizer, scaler)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        wrapped.step()
        scaler.update()
