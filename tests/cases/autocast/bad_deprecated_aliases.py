"""Module aliases of the deprecated namespaces: only the uses are references."""

import torch
import torch.cuda.amp as amp
from torch.cuda import amp as cuda_amp
from torch.cpu import amp as cpu_amp


def build(use_amp: bool) -> amp.GradScaler:  # error: AMP101
    return amp.GradScaler(enabled=use_amp)  # error: AMP101


def forward(model, x, device):
    if device == "cpu":
        with cpu_amp.autocast():  # error: AMP101
            return model(x)
    with cuda_amp.autocast(dtype=torch.float16):  # error: AMP101
        return model(x)


def shadowed(amp, model, x):
    with amp.autocast():  # a parameter called amp: not the module
        return model(x)
