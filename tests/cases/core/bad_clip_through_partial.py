import functools

import torch


def train(model, loader, optimizer, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    clip_fn = functools.partial(torch.nn.utils.clip_grad_norm_, max_norm=max_norm)
    for batch in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss
        scaled = scaler.scale(loss)
        scaled.backward()
        clip_fn(model.parameters())  # error: AMP002
        scaler.step(optimizer)
        scaler.update()


def train_ok(model, loader, optimizer, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    clip_fn = functools.partial(torch.nn.utils.clip_grad_norm_, max_norm=max_norm)
    for batch in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_fn(model.parameters())
        scaler.step(optimizer)
        scaler.update()
