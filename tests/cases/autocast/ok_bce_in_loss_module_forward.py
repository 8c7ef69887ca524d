"""Loss modules that stay legal under autocast: BCE with logits, a BCE computed with autocast
off, and a BCE module only ever called outside autocast (evaluation)."""
import torch
import torch.nn.functional as F
from torch import nn


class FocalWithLogits(nn.Module):
    def forward(self, logits, target):
        bce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        pt = torch.exp(-bce)
        return ((1 - pt) ** 2 * bce).mean()


class StableBCE(nn.Module):
    def forward(self, logits, target):
        with torch.autocast("cuda", enabled=False):
            return F.binary_cross_entropy(torch.sigmoid(logits.float()), target.float())


class PlainBCE(nn.Module):
    def forward(self, probs, target):
        return F.binary_cross_entropy(probs, target)


def train(model, loader, optimizer):
    focal, stable = FocalWithLogits(), StableBCE()
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x)
            loss = focal(logits, y) + stable(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


@torch.no_grad()
def evaluate(model, loader):
    metric = PlainBCE()
    return sum(metric(torch.sigmoid(model(x)), y).item() for x, y in loader)
