"""A float reaches GradScaler's device position through a parameter annotated ``float``, whose
caller passes a configuration value: the annotation says what it holds."""
import torch


def build_scaler(init_scale: float = 2.0**14, growth_interval: int = 1000):
    return torch.amp.GradScaler(init_scale, growth_interval=growth_interval)  # error: AMP016


def train(cfg, model, optimizer, loader):
    scaler = build_scaler(cfg.init_scale)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
