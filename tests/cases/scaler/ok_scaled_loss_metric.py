import math

import torch
import torch.nn.functional as F


def train(model, optimizer, loader, log):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaled = scaler.scale(loss)
        if not math.isfinite(scaled.item()):
            continue
        scaled.backward()
        scaler.step(optimizer)
        scaler.update()
        log({"loss": loss.item(), "scale": scaler.get_scale()})


def train_step(model, optimizer, scaler, x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    loss = scaler.scale(loss)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def accumulate(model, optimizer, scaler, batches):
    total = 0.0
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y) / len(batches)
        scaler.scale(loss).backward()
        total += loss.item()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    return total
