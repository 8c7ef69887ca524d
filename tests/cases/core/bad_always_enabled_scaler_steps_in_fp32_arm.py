"""The fp32 arm of `if use_fp16:` was copied from the fp16 arm: it back-propagates unscaled and
still steps through the scaler, which is always enabled (built without `enabled=`): the scaler
never saw `scale()`, so its step raises."""
import torch


def train(model, optimizer, loader, config):
    use_fp16 = config["use_fp16"]
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            loss = model(x, y)
        if use_fp16:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()  # error: AMP004
            scaler.step(optimizer)
            scaler.update()
        optimizer.zero_grad()
