import torch


def train_rebuilt_scaler(model, optimizer, loader):
    for x, y in loader:
        scaler = torch.amp.GradScaler("cuda")  # error: AMP008
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # error: AMP001


def train_rebuilt_optimizer(model, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # error: AMP001

