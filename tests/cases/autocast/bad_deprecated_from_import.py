"""``from torch.cuda.amp import ...``: the import line and every use are reported."""

import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast  # error: AMP101, AMP101


def train(model, optimizer, loader):
    scaler = GradScaler(enabled=torch.cuda.is_available())  # error: AMP101
    for x, y in loader:
        optimizer.zero_grad()
        with autocast():  # error: AMP101
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def predict(model, x):
    with autocast(False):  # error: AMP101
        return model(x.float())
