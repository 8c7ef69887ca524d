import torch


def train_gan(gen, disc, opt_g, opt_d, loader, z_dim=64):
    scaler = torch.amp.GradScaler("cuda")
    for real in loader:
        z = torch.randn(real.size(0), z_dim, device=real.device)
        with torch.autocast("cuda", dtype=torch.float16):
            fake = gen(z)
            loss_d = disc(real).mean() - disc(fake.detach()).mean()
            loss_g = -disc(fake).mean()
        opt_d.zero_grad()
        opt_g.zero_grad()
        scaler.scale(loss_d).backward(retain_graph=True)
        scaler.scale(loss_g).backward()
        scaler.unscale_(opt_d)
        torch.nn.utils.clip_grad_norm_(disc.parameters(), 1.0)
        scaler.step(opt_d)
        scaler.step(opt_g)
        scaler.update()
