"""A generator context manager holds the optimizer step: zero_grad on entry, the step on exit."""
import contextlib

import torch


@contextlib.contextmanager
def amp_step(scaler: torch.amp.GradScaler, optimizer, parameters=None, max_norm=None):
    optimizer.zero_grad(set_to_none=True)
    yield
    if max_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    scaler.step(optimizer)  # error: AMP001
