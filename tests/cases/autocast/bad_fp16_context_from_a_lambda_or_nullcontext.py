"""The autocast context comes from a function of no arguments chosen by a flag (``amp_ctx =
(lambda: torch.autocast(...)) if args.amp else contextlib.nullcontext``): with --amp the loss is
float16 and nothing scales it before backward."""
import contextlib

import torch


def train(model, optimizers, loader, args):
    amp_ctx = (lambda: torch.autocast("cuda", dtype=torch.float16)) if args.amp else contextlib.nullcontext
    for x, y in loader:
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        with amp_ctx():
            loss = model(x, y)
        loss.backward()  # error: AMP106
        for opt in optimizers:
            opt.step()


def train_bf16(model, optimizer, loader):
    ctx = lambda: torch.autocast("cuda", dtype=torch.bfloat16)  # noqa: E731
    for x, y in loader:
        optimizer.zero_grad()
        with ctx():
            loss = model(x, y)
        loss.backward()
        optimizer.step()
