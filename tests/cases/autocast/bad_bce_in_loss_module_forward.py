"""A loss module of the same file whose forward computes BCE, called under fp16 autocast: inline
(`FocalBCE()(probs, y)`), through a name and through an attribute set in `__init__`."""
import torch
import torch.nn.functional as F
from torch import nn


class FocalBCE(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, probs, target):
        bce = F.binary_cross_entropy(probs, target, reduction="none")  # error: AMP103
        pt = torch.exp(-bce)
        return ((1 - pt) ** self.gamma * bce).mean()


class MaskedBCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.bce = nn.BCELoss(reduction="none")

    def forward(self, probs, target, mask):
        return (self.bce(probs, target) * mask).sum() / mask.sum()  # error: AMP103


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = MaskedBCE()
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x, y, mask):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.criterion(torch.sigmoid(self.model(x)), y, mask)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()


def train(model, loader, optimizer):
    focal = FocalBCE(gamma=1.5)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            probs = model(x).sigmoid()
            loss = focal(probs, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
