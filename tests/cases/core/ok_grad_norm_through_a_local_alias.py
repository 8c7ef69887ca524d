"""The same alias read after ``unscale_``, a local bound to something that is not a gradient,
and an R1 penalty on the input gradients ``torch.autograd.grad`` returns (no ``.grad`` of a
parameter): no AMP002."""
import torch


def clip_gradients(model, clip):
    for _name, p in model.named_parameters():
        g = p.grad
        if g is None:
            continue
        param_norm = g.data.norm(2)
        if param_norm > clip:
            g.data.mul_(clip / (param_norm + 1e-6))


def weight_norms(model):
    out = []
    for p in model.parameters():
        w = p.detach()
        out.append(w.norm(2).item())
    return out


def r1_penalty(adv_output, images):
    r1_grads = torch.autograd.grad(outputs=[adv_output.sum()], inputs=[images], create_graph=True)[0]
    return r1_grads.square().sum([1, 2, 3]).mean() / 2


def train(model, loader, optimizer, scaler, clip):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        weight_norms(model)
        r1_penalty(model(x, y), x)
        scaler.unscale_(optimizer)
        clip_gradients(model, clip)
        scaler.step(optimizer)
        scaler.update()
