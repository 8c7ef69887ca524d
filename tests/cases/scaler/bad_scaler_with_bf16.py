import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()  # error: AMP901
        scaler.step(optimizer)
        scaler.update()


def train_cpu(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cpu")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()  # error: AMP901
        scaler.step(optimizer)
        scaler.update()
