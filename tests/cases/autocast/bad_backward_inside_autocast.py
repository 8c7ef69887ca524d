"""Backward passes written inside an enabled autocast region."""

import torch
import torch.nn.functional as F


def train(model, optimizer, loader, use_amp):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()  # error: AMP105
            scaler.step(optimizer)
            scaler.update()


def train_bf16(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
            if loss.isfinite():
                loss.backward()  # error: AMP105
        optimizer.step()


def train_cpu(model, optimizer, loader):
    ctx = torch.autocast("cpu", dtype=torch.bfloat16)
    for x, y in loader:
        optimizer.zero_grad()
        with ctx:
            out = model(x)
            torch.autograd.backward(F.mse_loss(out, y))  # error: AMP105
        optimizer.step()


@torch.autocast("cpu")
def step(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()  # error: AMP105
    optimizer.step()
