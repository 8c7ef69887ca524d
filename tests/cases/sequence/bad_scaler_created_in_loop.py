import torch


def train(model, optimizer, loader):
    for x, y in loader:
        scaler = torch.amp.GradScaler("cuda")  # error: AMP008
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_step(model, optimizer, x, y):
    scaler = torch.amp.GradScaler("cuda")  # error: AMP008
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def fit(model, optimizer, loader, epochs):
    for _epoch in range(epochs):
        for x, y in loader:
            train_step(model, optimizer, x, y)


class Learner:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def training_step(self, batch):
        self.scaler = torch.amp.GradScaler("cuda", init_scale=2.0**16)  # error: AMP008
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(*batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def fit(self, loader):
        for batch in loader:
            self.training_step(batch)
