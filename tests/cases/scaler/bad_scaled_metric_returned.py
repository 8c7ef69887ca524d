import torch


def optimize(model, optimizer, scaler, x):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().pow(2).mean()
    optimizer.zero_grad()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    return scaled.item()  # error: AMP015


def optimize_ok(model, optimizer, scaler, x):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().pow(2).mean()
    optimizer.zero_grad()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    return scaled  # the tensor is handed back, not a number: not reported
