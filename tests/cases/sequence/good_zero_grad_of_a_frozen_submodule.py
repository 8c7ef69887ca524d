"""Linear-probe warm-up: ``model.backbone.zero_grad()`` between the scaled backward and the step
drops only the backbone's gradients; the head's stay, so the step has inf checks and no AMP012."""
import torch


def train(model, optimizer, loader, warmup):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        if step < warmup:
            model.backbone.zero_grad(set_to_none=True)
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
