import torch
import torch.nn.functional as F


def train(model, optimizer, loader, amp_dtype):
    """One loop for both dtypes: the scaler is enabled for float16 only."""
    scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
