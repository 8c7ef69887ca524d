"""``self.model.zero_grad()`` (the whole model) and DDP's ``model.module.zero_grad()`` between the
scaled backward and the step wipe every gradient the step needs."""
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x, y)
        self.scaler.scale(loss).backward()
        self.model.zero_grad()  # error: AMP012
        self.scaler.step(self.optimizer)
        self.scaler.update()


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        model.module.zero_grad()  # error: AMP012
        scaler.step(optimizer)
        scaler.update()
