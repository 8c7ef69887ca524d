"""Autocast arguments that are fine, or not literals (never reported)."""

import functools

import torch
import torch.nn.functional as F


def forward_passes(model, x, device, dev, amp_dtype, use_amp, cfg):
    with torch.autocast(device.type):
        a = model(x)
    with torch.autocast(device_type=dev, dtype=amp_dtype, enabled=use_amp):
        b = model(x)
    with torch.autocast("cuda:0", dtype=torch.float16):
        c = model(x)
    with torch.autocast("cuda", torch.bfloat16, False):
        d = model(x)
    with torch.autocast("xla"), torch.autocast("npu"), torch.autocast("mps", dtype=None):
        e = model(x)
    with torch.autocast(**cfg):
        f = model(x)
    with torch.autocast(x.device.type, enabled=False):
        g = model(x)
    return a, b, c, d, e, f, g


def loop_over_devices(model, x):
    device = torch.device("cpu")
    for device in ("cpu", "cuda"):
        with torch.autocast(device):
            model(x)
    return device


def string_device(model, x):
    device = "cuda"
    with torch.autocast(device):
        return model(x)


amp_ctx = functools.partial(torch.autocast, "cuda", dtype=torch.float16)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    @torch.autocast("cuda")
    def forward(self, x):
        with amp_ctx():
            return self.lin(x)


class Gelu(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return F.gelu(x)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sigmoid(1.702 * x)
