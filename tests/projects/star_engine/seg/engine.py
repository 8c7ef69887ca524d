"""Training and validation loops (research-repo style: the entry point star-imports them)."""
import torch


def train_one_epoch(loader, model, criterion, optimizer, config, scaler=None):
    model.train()
    for images, targets in loader:
        optimizer.zero_grad()
        if config.amp:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(images), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = criterion(model(images), targets)
            loss.backward()
            optimizer.step()
    return loss.item()


@torch.no_grad()
def val_one_epoch(loader, model, criterion):
    model.eval()
    return sum(criterion(model(x), y).item() for x, y in loader)
