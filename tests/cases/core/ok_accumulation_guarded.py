import torch

ACCUM = 4


def train(model, optimizer, loader, device):
    scaler = torch.amp.GradScaler(device)
    for i, (x, y) in enumerate(loader):
        with torch.autocast(device, dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
