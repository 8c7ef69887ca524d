"""A first stage accumulates scaled gradients (a partial window may be left at its end); a second
stage builds its own optimizer and steps it in a loop without any backward of its own. Its clip
and step do not see the first stage's scaled gradients in any way that matters: no AMP002, no
AMP003 there."""
import torch


def stage_one(model, loader, accum=4):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    stage_two(model, loader)


def stage_two(model, loader):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad()
