"""Helpers without a scaler of their own: what they do to the gradients depends on the caller."""
import torch


def clip_gradients(model, max_norm):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def step_optimizer(scaler, optimizer):
    scaler.step(optimizer)  # error: AMP001


def unscale_again(scaler, optimizer):
    scaler.unscale_(optimizer)  # error: AMP005
