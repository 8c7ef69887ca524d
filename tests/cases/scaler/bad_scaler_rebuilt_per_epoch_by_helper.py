"""An epoch helper that builds its own GradScaler (the optimizer comes from outside): every epoch
restarts the loss scale calibration."""
import torch


def run_epoch(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")  # error: AMP008
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(model, loader, epochs):
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(epochs):
        run_epoch(model, optimizer, loader)
