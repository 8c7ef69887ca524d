"""The scaler's step taken through a partial bound under the AMP flag (the fp32 arm binds the
optimizer's own step): nothing updates the scaler, so the next iteration's unscale_ raises."""
import functools

import torch


def train(args, model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    if args.amp:
        do_step = functools.partial(scaler.step, optimizer)
    else:
        do_step = optimizer.step
    for x in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            loss = model(x)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        do_step()  # error: AMP001
