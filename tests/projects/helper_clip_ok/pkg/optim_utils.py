import torch


def clip_gradients(model, max_norm):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def step_optimizer(scaler, optimizer):
    scaler.step(optimizer)
