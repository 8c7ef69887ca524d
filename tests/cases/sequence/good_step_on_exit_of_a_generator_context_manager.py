"""A ``@contextlib.contextmanager`` zeroes the gradients on entry and steps on exit; the body's
scaled backward runs in between (the zero_grad is not between backward and step), and the loop
updates once after both networks stepped."""
import contextlib

import torch


@contextlib.contextmanager
def amp_step(scaler, optimizer, params=None):
    optimizer.zero_grad(set_to_none=True)
    yield
    if params is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
    scaler.step(optimizer)


def train(gen, disc, opt_g, opt_d, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with amp_step(scaler, opt_g, gen.parameters()):
            scaler.scale(gen(x).mean()).backward()
        with amp_step(scaler, opt_d):
            scaler.scale(disc(x).mean()).backward()
        scaler.update()
