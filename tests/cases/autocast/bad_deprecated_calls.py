"""Deprecated torch.cuda.amp / torch.cpu.amp names spelled out in full."""

import torch
import torch.nn.functional as F


class LegacyScaler(torch.cuda.amp.GradScaler):  # error: AMP101
    pass


class Square(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd  # error: AMP101
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @torch.cuda.amp.custom_bwd  # error: AMP101
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class Exp(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)  # error: AMP101
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @torch.cuda.amp.custom_bwd  # error: AMP101
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def train(model, optimizer, loader, use_amp):
    scaler = torch.cuda.amp.GradScaler(1024.0, enabled=use_amp)  # error: AMP101
    for x, y in loader:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(use_amp):  # error: AMP101
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    assert isinstance(scaler, torch.cuda.amp.GradScaler)  # error: AMP101
    return scaler


def evaluate(model, loader):
    with torch.cpu.amp.autocast(dtype=torch.bfloat16):  # error: AMP101
        return [model(x) for x, _ in loader]


def make_region(factory=torch.cuda.amp.autocast):  # error: AMP101
    return factory()


def legacy(model, x, flags):
    with torch.cuda.amp.autocast(*flags):  # error: AMP101
        return model(x)


def old_or_new(enabled, new_api):
    if new_api:  # a plain flag, not a version test: the old branch is still reachable
        ctx = torch.amp.autocast("cuda", enabled=enabled)
    else:
        ctx = torch.cuda.amp.autocast(enabled=enabled)  # error: AMP101
    return ctx
