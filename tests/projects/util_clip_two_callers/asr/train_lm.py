import torch

from asr import utils


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        utils.clip_grads(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
