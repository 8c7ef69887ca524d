import torch

from .amp import AmpHelper


def train(G, D, loader, opt_g, opt_d):
    amp = AmpHelper()
    for real in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            d_loss = D(real).mean() - D(G(torch.randn_like(real))).mean()
        amp.backward(d_loss)
        opt_d.step()  # error: AMP003
        opt_d.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            g_loss = -D(G(torch.randn_like(real))).mean()
        amp.backward(g_loss)
        amp.step(opt_g)
        opt_g.zero_grad()
        amp.update()


def finetune_generator(G, critic, loader, opt_g):
    amp = AmpHelper()
    for z in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = -critic(G(z)).mean()
        amp.backward(loss)
        opt_g.step()  # error: AMP003
        opt_g.zero_grad()
        amp.update()
