"""The same corrections added after ``unscale_``, to true gradients; a loss accumulated with
``+=`` is no gradient edit."""
import torch


def local_step(model, optimizer, scaler, batch, server_c, local_c, prox_mu):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch)
    loss += 0.0 * sum(p.sum() for p in model.parameters())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    for name, var in model.named_parameters():
        var.grad.data += server_c[name] - local_c[name]
    for name, var in model.named_parameters():
        var.grad -= prox_mu * var.data
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
