"""A task-loss weighter passed as ``scaler`` to a no_grad validation: not a GradScaler."""
import torch


class DWAScaler:
    def __init__(self, tasks):
        self.weights = {t: 1.0 for t in tasks}

    def scale(self, losses):
        return sum(self.weights[k] * v for k, v in losses.items())

    def update(self, losses):
        pass

    def step(self):
        pass


@torch.no_grad()
def validate(model, loader, scaler):
    total = 0.0
    for x, y in loader:
        losses = model(x, y)
        total += scaler.scale(losses).item()
    return total


def main(model, loader, val_loader, optimizer):
    scaler = DWAScaler(["seg", "depth"])
    amp_scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            total = scaler.scale(model(x, y))
        amp_scaler.scale(total).backward()
        amp_scaler.step(optimizer)
        amp_scaler.update()
    scaler.step()
    return validate(model, val_loader, scaler)
