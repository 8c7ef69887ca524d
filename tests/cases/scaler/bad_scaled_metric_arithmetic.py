import torch


def train(model, optimizer, loader, scaler, accum):
    running = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accum
        loss = scaler.scale(loss)
        loss.backward()
        running += loss.item() * accum  # error: AMP015
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return running
