"""A module-level saving function that a scaler-owning trainer class calls with its networks
and optimizers: the dict it builds has the optimizers' state and neither scaler's."""
import os

import torch


class GANTrainer:
    def __init__(self, cfg, net_g, net_d, opt_g, opt_d):
        self.cfg = cfg
        self.net_g, self.net_d = net_g, net_d
        self.opt_g, self.opt_d = opt_g, opt_d
        self.scaler_g = torch.amp.GradScaler("cuda")
        self.scaler_d = torch.amp.GradScaler("cuda")
        self.iteration = 0

    def dis_update(self, loss_d):
        self.opt_d.zero_grad()
        self.scaler_d.scale(loss_d).backward()
        self.scaler_d.step(self.opt_d)
        self.scaler_d.update()

    def gen_update(self, loss_g):
        self.opt_g.zero_grad()
        self.scaler_g.scale(loss_g).backward()
        self.scaler_g.step(self.opt_g)
        self.scaler_g.update()

    def save_checkpoint(self):
        _save_checkpoint(self.cfg, self.net_g, self.net_d, self.opt_g, self.opt_d, self.iteration)


def _save_checkpoint(cfg, net_g, net_d, opt_g, opt_d, iteration):
    path = os.path.join(cfg.logdir, f"iteration_{iteration:09}.pt")
    torch.save({"net_G": net_g.state_dict(), "net_D": net_d.state_dict(), "opt_G": opt_g.state_dict(),  # error: AMP013
                "opt_D": opt_d.state_dict(), "iteration": iteration}, path)
