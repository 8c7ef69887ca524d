import torch
from torch.cuda.amp import GradScaler, autocast  # error: AMP101


def train(model, optimizer, batches):
    scaler = GradScaler()  # error: AMP101
    for x, y in batches:
        optimizer.zero_grad()
        with autocast():  # error: AMP101
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # error: AMP004
        optimizer.step()


def train_disabled(model, optimizer, batches):
    off_scaler = torch.amp.GradScaler("cuda", enabled=False)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        loss.backward()  # a disabled scaler: AMP106's business, and this file has a scaler
        optimizer.step()
    return off_scaler
