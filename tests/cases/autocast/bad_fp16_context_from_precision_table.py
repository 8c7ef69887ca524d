"""The autocast context is picked from a table by the configured precision; with "fp16" the loss
is float16 and nothing scales it before backward."""
import contextlib

import torch


def train(model, optimizer, loader, args):
    for x, y in loader:
        optimizer.zero_grad()
        with {
            "bf16": torch.autocast("cuda", dtype=torch.bfloat16),
            "fp16": torch.autocast("cuda", dtype=torch.float16),
            "fp32": contextlib.nullcontext(),
        }[args.precision]:
            loss = model(x, y)
        loss.backward()  # error: AMP106
        optimizer.step()
