"""A GradScaler rebuilt at the top of every epoch, stepped in the batch loop inside it: the scale
calibration restarts every epoch."""
import torch


def main(model, optimizer, loaders, epochs):
    for epoch in range(epochs):
        loader = loaders[epoch]
        scaler = torch.amp.GradScaler("cuda")  # error: AMP008
        model.train()
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
