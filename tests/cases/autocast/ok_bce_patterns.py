"""BCE that does not run under CUDA autocast, and the with-logits forms."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    bce = nn.BCELoss()
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            z = model(x)
            loss = F.binary_cross_entropy_with_logits(z, y)
            loss = loss + nn.BCEWithLogitsLoss()(z, y)
            with torch.autocast("cuda", enabled=False):
                # the documented escape hatch: compute the loss in float32
                loss = loss + F.binary_cross_entropy(torch.sigmoid(z.float()), y.float())
                loss = loss + bce(torch.sigmoid(z.float()), y.float())
        probs = torch.sigmoid(z.float())
        loss = loss + F.binary_cross_entropy(probs, y)  # after the region
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def cpu_step(model, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        p = torch.sigmoid(model(x))
        return F.binary_cross_entropy(p.float(), y)  # CPU autocast runs BCE in float32


def helper(p, y):
    return F.binary_cross_entropy(p, y)


def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            p = torch.sigmoid(model(x))
        total += helper(p.float(), y).item()  # the helper is called outside the region
    return total


def other_criterion(model, x, y, use_logits):
    if use_logits:
        crit = nn.BCEWithLogitsLoss()
    else:
        crit = nn.BCELoss()
    with torch.autocast("cuda"):
        return crit(model(x), y)  # crit may be either: not reported
