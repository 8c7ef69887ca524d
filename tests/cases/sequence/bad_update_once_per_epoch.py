import torch


class Trainer:
    """The update sits in an epoch-end hook: the second step of an epoch raises (AMP001).

    The update itself is not AMP006: it only runs without a step when the loader is empty,
    and the path that skips a training loop entirely is not a finding.
    """

    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x, y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)  # error: AMP001

    def end_epoch(self):
        self.scaler.update()

    def fit(self, epochs):
        for _ in range(epochs):
            for x, y in self.loader:
                self.train_step(x, y)
            self.end_epoch()


def train_update_after_loader(model, optimizer, loader, epochs):
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # error: AMP001
        scaler.update()


def train_update_without_step(model, optimizer, loader, accum):
    # still reported: the update runs on micro-steps that did not step, with batches present
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            optimizer.zero_grad()
        scaler.update()  # error: AMP006
