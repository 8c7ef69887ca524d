import torch

from pkg import clip_gradients, step_optimizer
from pkg.optim_utils import unscale_again


def train(model, optimizer, loader, max_norm=1.0):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        clip_gradients(model, max_norm)  # error: AMP002
        step_optimizer(scaler, optimizer)


def train_twice_unscaled(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        unscale_again(scaler, optimizer)
        scaler.step(optimizer)
        scaler.update()
