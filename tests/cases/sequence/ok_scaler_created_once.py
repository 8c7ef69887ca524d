import torch


def train_folds(make_model, folds, epochs):
    """One scaler per training run (fold), built around the batch loop: fine."""
    for train_loader in folds:
        model, optimizer = make_model()
        scaler = torch.amp.GradScaler("cuda")
        for _epoch in range(epochs):
            for x, y in train_loader:
                optimizer.zero_grad()
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()


def run(model, optimizer, loader, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(configs, build):
    for cfg in configs:
        model, optimizer, loader = build(cfg)
        scaler = torch.amp.GradScaler("cuda")
        run(model, optimizer, loader, scaler)


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()


def train_disabled(model, optimizer, loader):
    for x, y in loader:
        scaler = torch.amp.GradScaler("cuda", enabled=False)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
