"""DINO-style per-parameter clipping that reads each gradient through a local alias
(``g = p.grad`` ... ``g.data.norm(2)``), called between the scaled backward and the step: the
norms are the scale times too large. The helper is right wherever it runs after ``unscale_``:
AMP002 is on its call."""
import torch


def clip_gradients(model, clip):
    norms = []
    for _name, p in model.named_parameters():
        g = p.grad
        if g is None:
            continue
        param_norm = g.data.norm(2)
        norms.append(param_norm.item())
        clip_coef = clip / (param_norm + 1e-6)
        if clip_coef < 1:
            g.data.mul_(clip_coef)
    return norms


def train(model, loader, optimizer, scaler, clip):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        clip_gradients(model, clip)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
