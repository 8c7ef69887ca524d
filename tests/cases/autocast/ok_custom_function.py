"""Custom autograd Functions that pair their decorators, or use neither."""

import functools

import torch
from torch.amp import custom_bwd, custom_fwd


class MatMul(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t(), a.t() @ g


class Plain(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


device_fwd = functools.partial(torch.amp.custom_fwd, device_type="cuda")


class Wrapped(torch.autograd.Function):
    @staticmethod
    @device_fwd
    def forward(ctx, x):
        return x + 1

    @staticmethod
    @functools.partial(torch.amp.custom_bwd, device_type="cuda")
    def backward(ctx, g):
        return g


class Child(MatMul):
    @staticmethod
    @custom_fwd(device_type="cuda")
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return (a @ b).relu()


class FromElsewhere(torch.nn.Module):
    """Not an autograd Function: a module's forward may use custom_fwd-like helpers freely."""

    @custom_fwd(device_type="cuda")
    def forward(self, x):
        return x
