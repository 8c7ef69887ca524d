"""A small CNN image classifier with four AMP mistakes: `amplint verify` on your own code.

    amplint verify docs/examples/verify/train_cnn.py --device cpu

amplint reports AMP001 (no ``scaler.update()``), AMP002 (the gradients are clipped while still
scaled), AMP015 (the logged loss is the scaled one) and AMP201 (the validation loss goes through
the scaler). ``verify`` fixes each with amplint's own fix, runs ``train`` on the problem of
``make_problem`` below, and measures whether each failure mode shows.
"""

import torch
import torch.nn.functional as F
from torch import nn

CLASSES = 4


class SmallCNN(nn.Module):
    def __init__(self, classes: int = CLASSES) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def make_problem(device, seed):
    """The model, the optimizer and the batches `amplint verify` trains on (same seed, same numbers)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    templates = torch.randn(CLASSES, 3, 16, 16, generator=g)  # one pattern per class, in noise
    batches = []
    for _ in range(48):
        y = torch.randint(0, CLASSES, (32,), generator=g)
        x = 1.5 * templates[y] + torch.randn(32, 3, 16, 16, generator=g)
        batches.append((x.to(device), y.to(device)))
    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return {"model": model, "optimizer": optimizer, "batches": batches}


def evaluate(model, batches, device, scaler):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            with torch.autocast(device_type=device, dtype=torch.float16):
                val_loss = F.cross_entropy(model(x), y)
            total += scaler.scale(val_loss).item()
    model.train()
    return total / len(batches)


def train(model, optimizer, batches, device):
    scaler = torch.amp.GradScaler(device)
    train_batches, val_batches = batches[:-8], batches[-8:]
    losses, grad_norms, val_losses = [], [], []
    model.train()
    for epoch in range(2):
        for x, y in train_batches:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaled = scaler.scale(loss)
            scaled.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            losses.append(scaled.item())
            grad_norms.append(norm.item())
        val_losses.append(evaluate(model, val_batches, device, scaler))
    return {"loss": losses, "grad_norm": grad_norms, "val_loss": val_losses}
