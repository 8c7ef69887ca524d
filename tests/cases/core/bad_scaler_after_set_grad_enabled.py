import torch


def evaluate(model, loader, scaler: torch.amp.GradScaler):
    torch.set_grad_enabled(False)
    total = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        total += scaler.scale(loss).item()  # error: AMP015, AMP201
    torch.set_grad_enabled(True)
    return total


def train(model, optimizer, loader, val_loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    with torch.no_grad():
        for x, y in val_loader:
            scaler.update()  # error: AMP201
    return evaluate(model, val_loader, scaler)
