import torch
from torch.nn.utils import clip_grad_norm_


def clip_gradients(scaler, optimizer, parameters, max_norm):
    scaler.unscale_(optimizer)
    return clip_grad_norm_(parameters, max_norm)


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler()
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = model(x, y)
        scaler.scale(loss).backward()
        grad_norm = clip_gradients(scaler, optimizer, model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        print(f"grad norm {grad_norm:.3f}")
