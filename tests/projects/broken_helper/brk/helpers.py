import torch


def clip(model)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
