import torch

from .stepper import Stepper


class Experiment:
    def __init__(self, cfg, grad_scaler):
        self.cfg = cfg
        self.net = torch.nn.Linear(cfg.width, 1).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=cfg.lr)
        self.stepper = Stepper(self.net, self.opt, grad_scaler)

    def run(self):
        for epoch in range(self.cfg.epochs):
            for x, y in self.cfg.loader:
                self.stepper.step(x, y)
