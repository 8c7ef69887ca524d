import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            aux = F.mse_loss(model(x), torch.zeros_like(y, dtype=torch.float))
        scaler.scale(loss + aux).backward()
        scaler.step(optimizer)
        scaler.update()
