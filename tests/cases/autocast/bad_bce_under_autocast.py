"""binary_cross_entropy / BCELoss under CUDA autocast (raises on the GPU, passes on CPU)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import binary_cross_entropy


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 1)
        self.criterion = nn.BCELoss()

    @torch.autocast("cuda", dtype=torch.float16)
    def forward(self, x, y):
        p = torch.sigmoid(self.head(x))
        return self.criterion(p, y)  # error: AMP103

    def objectness(self, p, y):
        return F.binary_cross_entropy(p, y, reduction="sum")  # error: AMP103

    def training_step(self, x, y, device):
        with torch.autocast(device_type=device.type):
            p = torch.sigmoid(self.head(x))
            return self.objectness(p, y)


def train(model, optimizer, loader, use_amp):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    bce = nn.BCELoss(reduction="mean")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=use_amp):
            z = model(x)
            loss = F.binary_cross_entropy(torch.sigmoid(z), y)  # error: AMP103
            loss = loss + bce(z.sigmoid(), y)  # error: AMP103
            loss = loss + nn.BCELoss()(torch.sigmoid(z), y)  # error: AMP103
            loss = loss + binary_cross_entropy(z.sigmoid(), y)  # error: AMP103
            loss = loss + torch.nn.functional.binary_cross_entropy(input=z.sigmoid(), target=y)  # error: AMP103
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
