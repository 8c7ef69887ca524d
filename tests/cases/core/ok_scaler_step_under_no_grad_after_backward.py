"""The backward runs with gradients on; only the step, the update and an EMA update sit in a
``torch.no_grad()`` block (harmless: the optimizer step does not record a graph anyway)."""
import torch


def train(model, ema, loader, optimizer, scaler, criterion):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        with torch.no_grad():
            scaler.step(optimizer)
            scaler.update()
            for pe, p in zip(ema.parameters(), model.parameters()):
                pe.lerp_(p, 0.001)
