import torch


def train_gan(gen, disc, opt_g, opt_d, loader, z_dim=128):
    scaler = torch.amp.GradScaler("cuda")
    for real in loader:
        z = torch.randn(real.size(0), z_dim, device=real.device)
        opt_d.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            fake = gen(z)
            loss_d = torch.nn.functional.softplus(disc(fake.detach())).mean() + torch.nn.functional.softplus(-disc(real)).mean()
        scaler.scale(loss_d).backward()
        scaler.step(opt_d)
        scaler.update()  # error: AMP007
        opt_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_g = torch.nn.functional.softplus(-disc(fake)).mean()
        scaler.scale(loss_g).backward()
        scaler.step(opt_g)
        scaler.update()  # error: AMP007


def train_optimizer_list(model, optimizers, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        for opt in optimizers:
            scaler.step(opt)
            scaler.update()  # error: AMP007
            opt.zero_grad()
