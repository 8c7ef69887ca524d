import torch

ACCUM = 4


def train_gan(gen, disc, opt_g, opt_d, loader, z_dim=128):
    scaler = torch.amp.GradScaler("cuda")
    for real in loader:
        z = torch.randn(real.size(0), z_dim, device=real.device)
        opt_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            fake = gen(z)
            loss_g = torch.nn.functional.softplus(-disc(fake)).mean()
        scaler.scale(loss_g).backward()
        # drop the gradients the generator loss left in the discriminator
        opt_d.zero_grad()
        scaler.step(opt_g)
        with torch.autocast("cuda", dtype=torch.float16):
            loss_d = torch.nn.functional.softplus(disc(fake.detach())).mean() + torch.nn.functional.softplus(-disc(real)).mean()
        scaler.scale(loss_d).backward()
        scaler.step(opt_d)
        scaler.update()


def train_accumulation(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


def train_zero_then_backward(model, optimizer, loader, warmup_loss):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = warmup_loss(model, x)
        scaler.scale(loss).backward()
        # the warm-up gradients are only used for statistics; the real step follows
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
