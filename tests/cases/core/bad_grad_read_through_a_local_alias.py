"""Gaussian-splatting densification statistics: the screen-space gradient of the view-space points
is read through a local (``grad_xy = viewspace.grad[vis, :2]``) between the scaled backward and
the step, so the accumulated norms are the scale times too large. The finding is on the ``.grad``
read, not on the ``torch.norm`` that uses it."""
import torch


def train_iteration(gaussians, optimizer, scaler, camera, render, opt, iteration):
    with torch.autocast("cuda", dtype=torch.float16):
        pkg = render(camera, gaussians)
        loss = (pkg["render"].float() - camera.image).abs().mean()
    scaler.scale(loss).backward()
    viewspace, vis = pkg["viewspace_points"], pkg["visibility_filter"]
    with torch.no_grad():
        if iteration < opt.densify_until_iter:
            grad_xy = viewspace.grad[vis, :2]  # error: AMP002
            gaussians.xyz_gradient_accum[vis] += torch.norm(grad_xy, dim=-1, keepdim=True)
            gaussians.denom[vis] += 1
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


def train_iteration_unscaled_first(gaussians, optimizer, scaler, camera, render, opt, iteration):
    with torch.autocast("cuda", dtype=torch.float16):
        pkg = render(camera, gaussians)
        loss = (pkg["render"].float() - camera.image).abs().mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    viewspace, vis = pkg["viewspace_points"], pkg["visibility_filter"]
    with torch.no_grad():
        grad_xy = viewspace.grad[vis, :2]
        gaussians.xyz_gradient_accum[vis] += torch.norm(grad_xy, dim=-1, keepdim=True)
    scaler.step(optimizer)
    scaler.update()
