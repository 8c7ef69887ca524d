"""A scaler that exists only under `--amp` (`GradScaler() if args.amp else None`), handed to a
helper that tests `scaler is not None` before unscaling and before stepping: the clip between
them sees unscaled gradients on the AMP path and plain ones on the other (the helper's test on
its parameter and the caller's test on the scaler are one condition)."""
from typing import Optional

import torch


def clip_and_step(optimizer, model, *, scaler: Optional[torch.amp.GradScaler] = None, max_norm: float = 3.0):
    if scaler is not None:
        scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return norm


def train(args, model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda") if args.amp else None
    for x in loader:
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler is not None):
            loss = model(x)
        if scaler is not None:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        clip_and_step(opt, model, scaler=scaler, max_norm=args.clip)
