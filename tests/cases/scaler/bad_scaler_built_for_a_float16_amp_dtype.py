"""The twin of ``ok_scaler_never_built_for_a_bf16_amp_dtype.py`` with the float16 fallback in
use: the scaler exists, and the gradient norms read before ``unscale_`` are the scale times too
large."""
import torch


def run(config, model, loader, optimizer):
    amp_dtype = torch.float16 if config.amp else None
    grad_scaler = torch.amp.GradScaler("cuda") if amp_dtype is torch.float16 else None
    for batch in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(batch)
        if grad_scaler is None:
            loss.backward()
        else:
            grad_scaler.scale(loss).backward()
        norms = [p.grad.norm() for p in model.parameters()]  # error: AMP002
        if grad_scaler is None:
            optimizer.step()
        else:
            grad_scaler.step(optimizer)
            grad_scaler.update()
