import torch

ACCUM = 4


def train_skip_nonfinite(model, optimizer, loader):
    """``update()`` after ``unscale_`` alone is accepted: the inf checks were recorded."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if torch.isfinite(norm):
            scaler.step(optimizer)
        scaler.update()


def train_accumulation(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM != 0:
            continue
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def train_optimizer_loop(model, optimizers, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
        for opt in optimizers:
            opt.zero_grad()


def train_retry_on_oom(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        try:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        scaler.update()
