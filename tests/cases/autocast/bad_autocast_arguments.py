"""Literal autocast arguments that cannot work."""

import torch
import torch.nn.functional as F
from torch.amp import custom_bwd, custom_fwd


def forward_passes(model, x):
    with torch.autocast(torch.device("cuda")):  # error: AMP102
        a = model(x)
    with torch.autocast(device_type=torch.device("cuda", 0), dtype=torch.float16):  # error: AMP102
        b = model(x)
    with torch.autocast(True):  # error: AMP102
        c = model(x)
    with torch.autocast("gpu"):  # error: AMP102
        d = model(x)
    with torch.amp.autocast("cuda", False):  # error: AMP102
        e = model(x)
    with torch.autocast("cuda", dtype=torch.float32):  # error: AMP102
        f = model(x)
    with torch.autocast("cpu", dtype="bfloat16"):  # error: AMP102
        g = model(x)
    with torch.autocast(enabled=False):  # error: AMP102
        h = model(x)
    return a, b, c, d, e, f, g, h


def device_variable(model, x):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with torch.autocast(device, dtype=torch.float16):  # error: AMP102
        return model(x)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    @torch.autocast  # error: AMP102
    def forward(self, x):
        return self.lin(x)


class Clamp(torch.autograd.Function):
    @staticmethod
    @custom_fwd  # error: AMP102
    def forward(ctx, x):
        return x.clamp(0, 1)

    @staticmethod
    @custom_bwd  # error: AMP102
    def backward(ctx, g):
        return g


class Softplus(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(cast_inputs=torch.float32)  # error: AMP102
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return F.softplus(x)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sigmoid(x)
