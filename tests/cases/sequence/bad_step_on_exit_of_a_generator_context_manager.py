"""A ``@contextlib.contextmanager`` zeroes the gradients on entry and steps on exit; the body's
scaled backward runs in between. Two networks step through it and nothing ever updates."""
import contextlib

import torch


@contextlib.contextmanager
def amp_step(scaler, optimizer):
    optimizer.zero_grad(set_to_none=True)
    try:
        yield
    finally:
        pass
    scaler.step(optimizer)  # error: AMP001


def train(gen, disc, opt_g, opt_d, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with amp_step(scaler, opt_g):
            scaler.scale(gen(x).mean()).backward()
        with amp_step(scaler, opt_d):
            scaler.scale(disc(x).mean()).backward()
