import torch

from .amp_utils import amp_step


class GANTrainer:
    def __init__(self, net_g, net_d, cfg):
        self.net_g, self.net_d = net_g, net_d
        self.opt_g = torch.optim.Adam(net_g.parameters(), lr=cfg.lr)
        self.opt_d = torch.optim.Adam(net_d.parameters(), lr=cfg.lr)
        self.scaler = torch.amp.GradScaler("cuda", enabled=cfg.fp16)

    def train_step(self, x, real):
        # the generator's backward runs inside the manager, its step when the block exits
        with amp_step(self.scaler, self.opt_g, self.net_g.parameters(), 1.0):
            with torch.autocast("cuda", dtype=torch.float16):
                fake = self.net_g(x)
                g_loss = -self.net_d(fake).mean()
            self.scaler.scale(g_loss).backward()
        with amp_step(self.scaler, self.opt_d):
            with torch.autocast("cuda", dtype=torch.float16):
                d_loss = self.net_d(fake.detach()).mean() - self.net_d(real).mean()
            self.scaler.scale(d_loss).backward()
        return g_loss.item(), d_loss.item()
