"""TabM-style training: the AMP dtype is bfloat16 or None (the float16 fallback is commented out),
and the GradScaler is built only for float16, so it never exists. The gradient statistics logged
between the backward and the step read real gradients, and the "scaled" arms never run."""
import torch


def compute_parameter_stats(module):
    return {name: p.grad.norm().item() for name, p in module.named_parameters() if p.grad is not None}


def run(config, model, loader, optimizer, writer):
    amp_dtype = (
        torch.bfloat16
        if config.get("amp", False) and torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        # else torch.float16 if config.get("amp", False)
        else None
    )
    grad_scaler = torch.amp.GradScaler("cuda") if amp_dtype is torch.float16 else None
    for step, batch in enumerate(loader):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(batch)
        if grad_scaler is None:
            loss.backward()
        else:
            grad_scaler.scale(loss).backward()
        writer.add_scalars("gradnorm", compute_parameter_stats(model), step)
        if grad_scaler is None:
            optimizer.step()
        else:
            grad_scaler.step(optimizer)
            grad_scaler.update()


def run_with_a_branch(config, model, loader, optimizer):
    amp_dtype = torch.bfloat16 if config.amp else None
    grad_scaler = None
    if amp_dtype == torch.float16:
        grad_scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(batch)
        if grad_scaler is not None:
            grad_scaler.scale(loss).backward()
        else:
            loss.backward()
        norms = [p.grad.norm() for p in model.parameters()]
        if grad_scaler is not None:
            grad_scaler.step(optimizer)
            grad_scaler.update()
        else:
            optimizer.step()
