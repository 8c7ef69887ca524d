"""optimizer.step() after unscale_ in the loop, and the update after the loop: routing the step
through the scaler is no safe fix here (it would step again before that update, AMP001)."""
import torch


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # error: AMP005
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # error: AMP003
    scaler.update()
