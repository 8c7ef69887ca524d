import torch


def train(model, optimizer, loader, sigma):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        for p in model.parameters():
            p.grad.add_(torch.randn_like(p.grad) * sigma)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
