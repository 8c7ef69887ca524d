import torch
from torch import nn


def train(model, optimizer, loader, max_norm=1.0):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()


def train_value(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
