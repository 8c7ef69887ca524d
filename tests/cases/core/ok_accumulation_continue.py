import torch
from torch.amp import GradScaler, autocast


def train_epoch(model, optimizer, loader, accum_steps=8):
    scaler = GradScaler("cuda")
    model.train()
    for step, batch in enumerate(loader):
        with autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss / accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % accum_steps != 0:
            continue
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
