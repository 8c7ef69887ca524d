import torch

ACCUM = 8


def clip_gradients(scaler, optimizer, model, max_norm=1.0):
    scaler.unscale_(optimizer)  # error: AMP005
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def train_helper_and_loop(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_gradients(scaler, optimizer, model)
        scaler.step(optimizer)
        scaler.update()


def train_per_micro_step(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / ACCUM
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # error: AMP005
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % ACCUM == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


def train_grad_norm_after_step(model, optimizer, loader, log):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.unscale_(optimizer)  # error: AMP005
        log(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]))
        scaler.update()


def train_duplicate(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.unscale_(optimizer)  # error: AMP005
        scaler.step(optimizer)
        scaler.update()
