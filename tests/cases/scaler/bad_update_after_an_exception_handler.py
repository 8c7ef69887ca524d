"""An exception in the training step (an OOM in backward) is caught and the batch skipped, but
the update still runs: with no step since the last update it raises ``No inf checks were
recorded prior to update`` (AMP006)."""
import torch


def train_finally(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        try:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        finally:
            scaler.update()  # error: AMP006


def train_after_handler(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        try:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        except RuntimeError:
            torch.cuda.empty_cache()
        scaler.update()  # error: AMP006
