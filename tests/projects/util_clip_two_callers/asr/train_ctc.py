import torch

from .utils import clip_grads


def train(model, optimizer, loader, accum=4):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss / accum).backward()
        if (step + 1) % accum == 0:
            gnorm = clip_grads(model.encoder.parameters(), 5.0)  # error: AMP002
            clip_grads(model.decoder.parameters(), 1.0)  # error: AMP002
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            print(gnorm)
