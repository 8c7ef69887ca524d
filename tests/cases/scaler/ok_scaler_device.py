import torch
import torch.nn.functional as F
from torch.amp import GradScaler

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

scaler_a = torch.amp.GradScaler("cuda", 1024.0)
scaler_b = GradScaler(device="cpu", init_scale=2.0**16)
scaler_c = torch.amp.GradScaler(DEVICE)


def train(model, optimizer, loader):
    """The default (cuda) scaler next to an autocast whose device is not a literal."""
    scaler = torch.amp.GradScaler()
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast(DEVICE, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        with torch.autocast("cpu", enabled=False):
            loss = loss + 0.0
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
