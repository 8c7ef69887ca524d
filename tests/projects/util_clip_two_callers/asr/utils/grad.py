"""A gradient utility shared by two recipes: right after `unscale_`, wrong before it."""
import torch


def clip_grads(params, max_norm):
    params = [p for p in params if p.grad is not None]
    return torch.nn.utils.clip_grad_norm_(params, max_norm)
