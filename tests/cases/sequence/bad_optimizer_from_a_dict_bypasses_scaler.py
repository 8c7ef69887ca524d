"""GAN steps with the optimizers in a dict handed in as ``opts``: the discriminator steps through
the scaler, the generator's ``opts["G"].step()`` bypasses it."""
import torch
import torch.nn.functional as F


def d_step(G, D, real, z, opts, scaler):
    opts["D"].zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.softplus(D(G(z).detach())).mean() + F.softplus(-D(real)).mean()
    scaler.scale(loss).backward()
    scaler.step(opts["D"])


def g_step(G, D, z, opts, scaler):
    opts["G"].zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.softplus(-D(G(z))).mean()
    scaler.scale(loss).backward()
    opts["G"].step()  # error: AMP003


def g_step_by_name(G, D, z, optimizers, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.softplus(-D(G(z))).mean()
    scaler.scale(loss).backward()
    optimizers["gen"].step()  # error: AMP003


def train(G, D, loader, opts):
    scaler = torch.amp.GradScaler("cuda")
    for real, z in loader:
        d_step(G, D, real, z, opts, scaler)
        g_step(G, D, z, opts, scaler)
        scaler.update()
