"""A Kaggle-style config class whose flag is off as shipped: the conversion under ``if
CFG.half_weights:`` is a choice the scaler's own flag may not follow (not reported)."""
import torch


class CFG:
    half_weights = False
    apex = True
    lr = 2e-4


def train(model, loader):
    if CFG.half_weights:
        model = model.half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=CFG.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=CFG.apex)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=CFG.apex):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
