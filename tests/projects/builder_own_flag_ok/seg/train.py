"""The builder converts the weights under a flag of its own, and the trainer turns its GradScaler
off under that flag (pure fp16 training there): no finding."""
import torch

from .models import build_model


def train(cfg, net_cls, loader, criterion):
    model = build_model(cfg, net_cls)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=not cfg.fp16_weights)
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
