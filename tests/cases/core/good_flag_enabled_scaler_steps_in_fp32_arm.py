"""Both arms step through the scaler, which is built with `enabled=` the same flag (or the same
config entry): in the fp32 arm it is disabled and its `step()` is a plain `optimizer.step()`."""
import torch


def train(model, optimizer, loader, config):
    use_fp16 = config["use_fp16"]
    scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            loss = model(x, y)
        if use_fp16:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            scaler.step(optimizer)
            scaler.update()
        optimizer.zero_grad()


def train_cfg(model, optimizer, loader, config):
    use_fp16 = config["use_fp16"]
    scaler = torch.amp.GradScaler("cuda", enabled=config["use_fp16"])
    for x, y in loader:
        if use_fp16:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        else:
            loss = model(x, y)
            loss.backward()
            scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
