import torch

ACCUM = 4


def train_dedented(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            optimizer.zero_grad()
        scaler.update()  # error: AMP006


class Trainer:
    def __init__(self, model, optimizer, accum):
        self.model = model
        self.optimizer = optimizer
        self.accum = accum
        self.scaler = torch.amp.GradScaler("cuda")

    def optimizer_step(self, step):
        if (step + 1) % self.accum == 0:
            self.scaler.step(self.optimizer)
            self.optimizer.zero_grad()

    def fit(self, loader):
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss / self.accum).backward()
            self.optimizer_step(step)
            self.scaler.update()  # error: AMP006
