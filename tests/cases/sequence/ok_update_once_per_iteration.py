import torch


def train_gan(gen, disc, opt_g, opt_d, loader, z_dim=128):
    scaler = torch.amp.GradScaler("cuda")
    for real in loader:
        z = torch.randn(real.size(0), z_dim, device=real.device)
        opt_d.zero_grad()
        opt_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            fake = gen(z)
            loss_d = torch.nn.functional.softplus(disc(fake.detach())).mean() + torch.nn.functional.softplus(-disc(real)).mean()
            loss_g = torch.nn.functional.softplus(-disc(fake)).mean()
        scaler.scale(loss_d).backward(retain_graph=True)
        scaler.scale(loss_g).backward()
        scaler.step(opt_d)
        scaler.step(opt_g)
        scaler.update()


def train_two_scalers(gen, disc, opt_g, opt_d, loader):
    scaler_g = torch.amp.GradScaler("cuda")
    scaler_d = torch.amp.GradScaler("cuda")
    for real in loader:
        opt_d.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_d = disc(real, gen).mean()
        scaler_d.scale(loss_d).backward()
        scaler_d.step(opt_d)
        scaler_d.update()
        opt_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_g = gen(real, disc).mean()
        scaler_g.scale(loss_g).backward()
        scaler_g.step(opt_g)
        scaler_g.update()


def train_critic_steps(gen, critic, opt_g, opt_c, loader, n_critic=5):
    scaler = torch.amp.GradScaler("cuda")
    for real in loader:
        for _ in range(n_critic):
            opt_c.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss_c = critic(real, gen).mean()
            scaler.scale(loss_c).backward()
            scaler.step(opt_c)
            scaler.update()
        opt_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_g = gen(real, critic).mean()
        scaler.scale(loss_g).backward()
        scaler.step(opt_g)
        scaler.update()


def train_alternating(gen, disc, opt_g, opt_d, loader):
    scaler = torch.amp.GradScaler("cuda")
    for i, real in enumerate(loader):
        if i % 2 == 0:
            opt_d.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = disc(real, gen).mean()
            scaler.scale(loss).backward()
            scaler.step(opt_d)
            scaler.update()
        else:
            opt_g.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = gen(real, disc).mean()
            scaler.scale(loss).backward()
            scaler.step(opt_g)
            scaler.update()
