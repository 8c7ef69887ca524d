import torch
import torch.nn.functional as F


def train_positional(model, optimizer, loader, lam=10.0):
    scaler = torch.amp.GradScaler("cuda")
    params = list(model.parameters())
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)  # error: AMP010
        with torch.autocast("cuda", dtype=torch.float16):
            penalty = sum(g.pow(2).sum() for g in grads).sqrt()
            loss = loss + lam * penalty
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_keyword(model, optimizer, loader, lam=10.0):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        (g,) = torch.autograd.grad(  # error: AMP010
            outputs=scaler.scale(loss),
            inputs=[x],
            create_graph=True,
        )
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss + lam * g.norm(2)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(self.model(x), y)
        scaled = self.scaler.scale(loss)
        grads = torch.autograd.grad(scaled, list(self.model.parameters()), create_graph=True)  # error: AMP010
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss + 0.1 * torch.stack([g.norm() for g in grads]).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
