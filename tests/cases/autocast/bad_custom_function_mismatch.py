"""autograd Functions with only one of custom_fwd / custom_bwd."""

import torch
from torch.amp import custom_bwd, custom_fwd
from torch.autograd import Function as AutogradFunction


class MatMul(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):  # error: AMP104
        a, b = ctx.saved_tensors
        return g @ b.t(), a.t() @ g


class Scale(AutogradFunction):
    @staticmethod
    def forward(ctx, x, s):  # error: AMP104
        ctx.s = s
        return x * s

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, g):
        return g * ctx.s, None


class Base(torch.autograd.Function):
    @staticmethod
    def backward(ctx, g):
        return g


class Identity(Base):  # error: AMP104
    @staticmethod
    @custom_fwd(device_type="cpu")
    def forward(ctx, x):
        return x.clone()


class Legacy(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd  # error: AMP101
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):  # error: AMP104
        return g * 2
