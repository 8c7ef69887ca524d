"""The scaler's step and update taken through aliases (a partial, a bound method) in order."""
import functools

import torch


def train(args, model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    if args.amp:
        do_step = functools.partial(scaler.step, optimizer)
        do_update = scaler.update
    else:
        do_step = optimizer.step
        do_update = scaler.update
    for x in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            loss = model(x)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        do_step()
        do_update()
