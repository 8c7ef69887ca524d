"""Entry point: ``from engine import *`` brings the loops; the scaler only leaves this file
through ``train_one_epoch``, and the checkpoint it writes keeps the scaler state."""
import os

import torch
from torch.amp import GradScaler
from engine import *


def main(config, model, train_loader, val_loader, criterion):
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    scaler = GradScaler("cuda", enabled=config.amp)
    best = float("inf")
    for epoch in range(config.epochs):
        train_one_epoch(train_loader, model, criterion, optimizer, config, scaler=scaler)
        loss = val_one_epoch(val_loader, model, criterion)
        if loss < best:
            best = loss
            torch.save(model.state_dict(), os.path.join(config.work_dir, "best.pth"))
        torch.save({"epoch": epoch, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}, os.path.join(config.work_dir, "latest.pth"))
