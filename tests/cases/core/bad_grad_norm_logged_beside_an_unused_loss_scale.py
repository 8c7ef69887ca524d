"""A per-micro-step gradient-norm monitor that reads the still-scaled gradients and brings the
result back to true units with ``1 / scaler.get_scale()`` instead of unscaling (which is allowed
once per step only); the twin below logs the scale next to the norm without using it."""
import torch


def monitor(model, scaler, log):
    inv_scale = 1.0 / scaler.get_scale()
    norms = [p.grad.detach().float().norm() for p in model.parameters() if p.grad is not None]
    log["accum_grad_norm"] = (torch.stack(norms).norm() * inv_scale).item()


def monitor_divided(model, scaler, log):
    scale = scaler.get_scale()
    total = sum(p.grad.norm() ** 2 for p in model.parameters() if p.grad is not None) ** 0.5
    log["grad_norm"] = float(total / scale)


def monitor_logged_only(model, scaler, log):
    log["scale"] = scaler.get_scale()
    log["grad_norm"] = float(sum(p.grad.norm() for p in model.parameters() if p.grad is not None))  # error: AMP002


def train(model, loader, optimizer, scaler, accum, log):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accum
        scaler.scale(loss).backward()
        monitor(model, scaler, log)
        monitor_divided(model, scaler, log)
        monitor_logged_only(model, scaler, log)
        if (i + 1) % accum == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
