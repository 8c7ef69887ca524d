"""Test-time adaptation written under ``@torch.no_grad()``: the scaled backward raises there
(no graph), and the step and update that follow are evaluation code too (AMP201 on each)."""
import torch


@torch.no_grad()
def adapt_and_eval(net, loader, optimizer, tta_scaler, entropy):
    net.train()
    correct = total = 0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = net(x)
            ent = entropy(logits.float()).mean()
        optimizer.zero_grad(set_to_none=True)
        tta_scaler.scale(ent).backward()  # error: AMP201
        tta_scaler.step(optimizer)  # error: AMP201
        tta_scaler.update()  # error: AMP201
        correct += (logits.argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total
