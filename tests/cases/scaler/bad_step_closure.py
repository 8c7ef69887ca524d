import torch
import torch.nn.functional as F


def train_lbfgs(model, loader):
    optimizer = torch.optim.LBFGS(model.parameters())
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:

        def closure():
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            return loss

        scaler.step(optimizer, closure=closure)  # error: AMP011
        scaler.update()


def train_positional(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:

        def closure():
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            return loss

        closure()
        scaler.step(optimizer, closure)  # error: AMP011
        scaler.update()


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x, y):
        def closure():
            self.optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(self.model(x), y)
            self.grad_scaler.scale(loss).backward()
            return loss

        loss = closure()
        self.grad_scaler.step(self.optimizer, closure=lambda: closure())  # error: AMP011
        self.grad_scaler.update()
        return loss
