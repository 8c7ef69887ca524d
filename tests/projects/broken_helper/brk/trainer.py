import torch

from .helpers import clip


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        clip(model)  # the helper does not parse: nothing is concluded about it
        scaler.step(optimizer)
        scaler.update()
