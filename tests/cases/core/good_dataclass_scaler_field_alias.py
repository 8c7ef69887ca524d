"""A dataclass of training parts whose scaler field is Optional: the step helper binds
``scaler = c.scaler`` and unscales through the local before the shared clip, and the backward
helper tests the field itself. The local stands for the field, so the clip meets unscaled
gradients on the AMP path and no scaler at all on the other (where autocast is off too: with
it on, that path would be float16 without loss scaling, AMP106)."""
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
        loss.backward()


def amp_step(c: Parts, max_norm):
    scaler = c.scaler
    if scaler is not None:
        scaler.unscale_(c.optimizer)
    torch.nn.utils.clip_grad_norm_(c.model.parameters(), max_norm)
    if scaler is not None:
        scaler.step(c.optimizer)
        scaler.update()
    else:
        c.optimizer.step()


def train(c: Parts, loader):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=c.scaler is not None):
            loss = c.model(x, y)
        amp_backward(c, loss)
        amp_step(c, 1.0)
