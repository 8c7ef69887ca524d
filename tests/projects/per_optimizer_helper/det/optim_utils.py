"""Optimizer helpers shared by the engines."""
from typing import Iterable, Optional

import torch
from torch.amp import GradScaler


def params_of(optimizer: torch.optim.Optimizer):
    return [p for group in optimizer.param_groups for p in group["params"]]


def step_optimizer(optimizer: torch.optim.Optimizer, params: Iterable[torch.nn.Parameter], *,
                   scaler: Optional[GradScaler] = None, max_norm: float = 0.0):
    """Unscale (AMP only), clip and step one optimizer; the caller updates the scale once, after
    every optimizer of the iteration has stepped."""
    if scaler is not None:
        scaler.unscale_(optimizer)
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(list(params), max_norm)
    if scaler is not None:
        scaler.step(optimizer)
    else:
        optimizer.step()
