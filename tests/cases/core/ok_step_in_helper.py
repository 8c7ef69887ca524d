import torch


def optimizer_step(scaler, optimizer):
    scaler.step(optimizer)
    optimizer.zero_grad(set_to_none=True)


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        optimizer_step(scaler, optimizer)
        scaler.update()
