import torch
import torch.nn.functional as F


def train_disabled(model, optimizer, loader, path):
    """A literally disabled scaler has no state worth saving."""
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


def train_pickled_scaler(model, optimizer, loader, path):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": scaler}, path)


class TestSuite:
    """One method trains with a scaler, an unrelated one checkpoints an optimizer without AMP."""

    def test_amp(self, model, optimizer, x, y):
        scaler = torch.amp.GradScaler("cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    def test_optimizer_reload(self, model, optimizer, path):
        loss = model(torch.randn(2, 2)).sum()
        loss.backward()
        optimizer.step()
        torch.save({"optimizer_state_dict": optimizer.state_dict()}, path)


def export(model, optimizer, path):
    """No training here, and an optimizer checkpoint written by code that never scales."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
