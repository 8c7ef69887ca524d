import torch

ACCUM = 4


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        optimizer.zero_grad()  # error: AMP012
        scaler.step(optimizer)
        scaler.update()


def train_model_zero_grad(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        model.zero_grad()  # error: AMP012
        scaler.step(optimizer)
        scaler.update()


def train_accumulation(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM == 0:
            optimizer.zero_grad(set_to_none=False)  # error: AMP012
            scaler.step(optimizer)
            scaler.update()
