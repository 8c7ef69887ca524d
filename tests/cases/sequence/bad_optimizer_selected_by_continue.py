"""The optimizer chosen by ``continue`` is stepped, and nothing ever updates the scaler."""
import torch
from torch.amp import GradScaler, autocast


def train(model, optimizers, loader, idx):
    scaler = GradScaler("cuda")
    for x, y in loader:
        with autocast("cuda", dtype=torch.float16):
            loss = model(x).sub(y).pow(2).mean()
        scaler.scale(loss).backward()
        for i, opt in enumerate(optimizers):
            if i != idx:
                continue
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)  # error: AMP001
        for opt in optimizers:
            opt.zero_grad()
