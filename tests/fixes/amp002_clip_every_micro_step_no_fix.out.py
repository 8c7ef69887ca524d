import torch


def train(model, optimizer, loader, accum=4):
    # the clip runs on every micro-step but the step only on every fourth: an unscale_
    # inserted before the clip would run twice before one step (a RuntimeError), so the
    # finding stays and no fix is applied (the real fix moves the clip under the `if`)
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accum
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
