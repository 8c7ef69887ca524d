"""SCAFFOLD-style control-variate correction added to the gradients with ``+=`` while they are
still scaled: after ``unscale_`` the correction is divided by the loss scale."""
import torch


def local_step(model, optimizer, scaler, batch, server_c, local_c, prox_mu):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch)
    scaler.scale(loss).backward()
    for name, var in model.named_parameters():
        var.grad.data += server_c[name] - local_c[name]  # error: AMP002
    for name, var in model.named_parameters():
        var.grad -= prox_mu * var.data  # error: AMP002
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
