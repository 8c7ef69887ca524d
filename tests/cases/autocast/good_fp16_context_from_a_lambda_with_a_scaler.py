"""The autocast context comes from a lambda chosen by a flag, and the float16 loss is scaled."""
import contextlib

import torch


def train(model, optimizer, loader, args):
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    amp_ctx = (lambda: torch.autocast("cuda", dtype=torch.float16)) if args.amp else contextlib.nullcontext
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with amp_ctx():
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
