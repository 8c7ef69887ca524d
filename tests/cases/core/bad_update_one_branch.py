import torch


def train(model, optimizer, loader, log_every=10):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # error: AMP001
        if i % log_every == 0:
            print(loss.item())
            scaler.update()
