import torch


def ppo_update(model, optimizer, scaler, minibatches, epochs):
    # the step runs per minibatch, the update once after all epochs: the next minibatch's
    # unscale_ meets an optimizer already stepped (RuntimeError) - the step lacks its update
    for _ in range(epochs):
        for x, y in minibatches:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)  # error: AMP001
    scaler.update()


def train_logging_steps(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)  # error: AMP001
        if step % 10 != 0:
            continue
        print(loss.item())
        scaler.update()


def train_ok(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
