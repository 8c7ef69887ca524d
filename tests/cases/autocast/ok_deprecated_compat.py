"""Version-compatibility code that only falls back to the deprecated names on old torch."""

import torch
import torch.nn.functional as F
from packaging import version
from torch.cuda.amp.grad_scaler import OptState  # not one of the deprecated names
from torch.cuda.amp.common import amp_definitely_not_available

try:
    from torch.amp import GradScaler
except ImportError:
    from torch.cuda.amp import GradScaler

TORCH_2_4 = version.parse(torch.__version__) >= version.parse("2.4")


def make_scaler(enabled):
    return torch.amp.GradScaler("cuda", enabled=enabled) if TORCH_2_4 else torch.cuda.amp.GradScaler(enabled=enabled)


def autocast(enabled, device="cuda"):
    if TORCH_2_4:
        return torch.amp.autocast(device, enabled=enabled)
    else:
        return torch.cuda.amp.autocast(enabled)


def region(enabled):
    if hasattr(torch, "autocast"):
        return torch.autocast("cuda", enabled=enabled)
    return torch.cuda.amp.autocast(enabled=enabled)


def train(model, optimizer, loader):
    scaler = GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with autocast(True):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return OptState.READY, amp_definitely_not_available()
