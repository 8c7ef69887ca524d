import torch


class Trainer:
    def __init__(self, model, optimizer, use_amp):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = use_amp
        self.scaler = torch.amp.GradScaler("cuda") if use_amp else None

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
        # two different conditions that are equal at runtime: the arms are still the AMP and the
        # non-AMP variant of one step
        if self.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()

    def fit(self, loader):
        for x, y in loader:
            self.train_step(x, y)


def train(model, optimizer, loader, fp16=True):
    scaler = torch.amp.GradScaler("cuda", enabled=fp16)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
            loss = model(x, y)
        scaler.scale(loss).backward() if fp16 else loss.backward()
        if scaler.is_enabled():
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
