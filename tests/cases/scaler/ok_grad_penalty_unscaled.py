import torch
import torch.nn.functional as F


def train_recipe(model, optimizer, loader):
    """The documented recipe: multiply the gradients by 1 / scale."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaled_grad_params = torch.autograd.grad(outputs=scaler.scale(loss), inputs=model.parameters(), create_graph=True)
        inv_scale = 1.0 / scaler.get_scale()
        grad_params = [p * inv_scale for p in scaled_grad_params]
        with torch.autocast("cuda", dtype=torch.float16):
            grad_norm = torch.stack([g.pow(2).sum() for g in grad_params]).sum().sqrt()
            loss = loss + grad_norm
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_divide(model, optimizer, loader, scales):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        grads = torch.autograd.grad(scaler.scale(loss), list(model.parameters()), create_graph=True)
        grads = [g / scaler.get_scale() for g in grads]
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss + sum(g.norm() for g in grads)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())


def scaled_grads(scaler, loss, params):
    """Returns the scaled gradients to a caller that unscales them."""
    grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    return grads


def penalty_with_given_scale(scaler, loss, params, loss_scale):
    grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    return sum((g / loss_scale).pow(2).sum() for g in grads)


def plain_penalty(model, optimizer, loader):
    """autograd.grad on the unscaled loss is not this rule's business."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        (g,) = torch.autograd.grad(loss.float(), [x], create_graph=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss + g.norm()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
