"""Backward passes after the autocast block, or in regions that do not autocast."""

import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_disabled(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
            with torch.autocast("cpu", enabled=False):
                loss = F.mse_loss(out.float(), y)
                loss.backward()  # autocast is off here
        optimizer.step()


def train_closure(model, optimizer, loader):
    for x, y in loader:
        with torch.autocast("cpu", dtype=torch.bfloat16):

            def closure():  # defined in the region, run by the optimizer outside it
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                return loss

        optimizer.step(closure)


def fp32_only(model, optimizer, x, y):
    with torch.autocast("cpu", enabled=False):
        loss = F.mse_loss(model(x), y)
        loss.backward()
    optimizer.step()
