import torch

from .optim_utils import clip_gradients, step_optimizer


def train(model, optimizer, loader, max_norm=1.0):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_gradients(model, max_norm)  # the caller unscaled first
        step_optimizer(scaler, optimizer)
        scaler.update()  # the caller updates after the helper's step
