"""OOM retry: the loss stays ``None`` until a forward-backward succeeds (the helper always returns
a value), and a batch whose attempts all fail is skipped with ``continue``. The step never runs
without this iteration's backward, so the ``zero_grad`` at the top wipes nothing a step needs."""
import torch


def forward_backward(model, scaler, batch, parts):
    total = 0.0
    for chunk in torch.chunk(batch, parts):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(chunk) / parts
        scaler.scale(loss).backward()
        total += loss.item()
    return total


def train(model, optimizer, loader, retries=2):
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        optimizer.zero_grad(set_to_none=True)
        parts, loss_value = 1, None
        for _ in range(retries + 1):
            try:
                loss_value = forward_backward(model, scaler, batch, parts)
                break
            except torch.cuda.OutOfMemoryError:
                optimizer.zero_grad(set_to_none=True)
                parts *= 2
        if loss_value is None:
            continue
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
