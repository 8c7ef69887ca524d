"""The builder converts the weights under a flag of its own; the trainer's GradScaler is always
on, so with the flag set the first step raises ``Attempting to unscale FP16 gradients``."""
import torch

from .models import build_model


def train(cfg, net_cls, loader, criterion):
    model = build_model(cfg, net_cls)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
