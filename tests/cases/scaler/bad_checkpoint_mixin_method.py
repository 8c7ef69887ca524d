"""The checkpoint is written by a mixin's method that the scaler-owning trainer inherits: the
saved dict has the model and optimizer but not the scaler."""
import os

import torch


class ResumableMixin:
    out_dir = "checkpoints"

    def save_state(self, tag):
        path = os.path.join(self.out_dir, f"{tag}.pt")
        torch.save({"net": self.net.state_dict(), "optim": self.optim.state_dict(), "it": self.it}, path)  # error: AMP013
        return path


class Trainer(ResumableMixin):
    def __init__(self, net, optim):
        self.net = net
        self.optim = optim
        self.it = 0
        self.scaler = torch.amp.GradScaler("cuda")

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.net(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optim)
            self.scaler.update()
            self.optim.zero_grad()
            self.it += 1
            if self.it % 1000 == 0:
                self.save_state(f"it{self.it}")
