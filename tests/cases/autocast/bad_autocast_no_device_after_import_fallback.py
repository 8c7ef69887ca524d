"""``autocast`` imported from ``torch.amp`` with a ``torch.cuda.amp`` fallback for old torch: a
supported torch runs the ``try`` body's import, whose ``device_type`` is required, so the call
without one raises TypeError (AMP102)."""
import torch

try:
    from torch.amp import autocast
except ImportError:
    from torch.cuda.amp import autocast


def forward(model, batch, scaler):
    try:
        with autocast("cuda"):
            return model(batch)
    except RuntimeError:
        with autocast(enabled=scaler is not None):  # error: AMP102
            return model(batch)


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        loss = forward(model, batch, scaler)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
