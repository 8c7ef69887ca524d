"""A Kaggle-style config class whose flag is a constant: ``if CFG.half_weights:`` always runs, so
the model the GradScaler steps is fp16 (AMP014), whatever the scaler's own flag says."""
import torch


class CFG:
    half_weights = True
    apex = True
    lr = 2e-4


def train(model, loader):
    if CFG.half_weights:
        model = model.half()  # error: AMP014
    optimizer = torch.optim.AdamW(model.parameters(), lr=CFG.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=CFG.apex)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=CFG.apex):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
