import torch


def evaluate(model, loader, scaler, criterion):
    model.eval()
    total = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        total += loss.item()
        scaler.update()  # error: AMP201
    return total / len(loader)


def train(model, optimizer, loader, val_loader, criterion, epochs=3):
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        print(evaluate(model, val_loader, scaler, criterion))
