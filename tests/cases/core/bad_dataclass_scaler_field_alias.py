"""The same parts, but the step helper clips before any unscale_: the clip meets the gradients
the backward helper scaled through the field ``c.scaler``."""
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class Parts:
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scaler: Optional[torch.amp.GradScaler] = None


def amp_backward(c: Parts, loss):
    if c.scaler is not None:
        c.scaler.scale(loss).backward()
    else:
        loss.backward()  # error: AMP106


def amp_step(c: Parts, max_norm):
    scaler = c.scaler
    torch.nn.utils.clip_grad_norm_(c.model.parameters(), max_norm)  # error: AMP002
    if scaler is not None:
        scaler.step(c.optimizer)
        scaler.update()
    else:
        c.optimizer.step()


def train(c: Parts, loader):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = c.model(x, y)
        amp_backward(c, loss)
        amp_step(c, 1.0)
