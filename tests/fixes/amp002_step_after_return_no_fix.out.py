"""A clipper's ``__call__`` holds a step below its ``return`` (it never runs): an ``unscale_``
inserted before its clip would not be followed by that step, so no fix is applied."""
import torch


class NormClipper:
    def __init__(self, max_norm):
        self.max_norm = max_norm
        self.history = []

    def __call__(self, parameters):
        norm = torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)
        self.history.append(float(norm))
        return norm
        scaler.step(optim)  # noqa: F821


class Trainer:
    def __init__(self, net, optim, max_norm=5.0):
        self.net = net
        self.optim = optim
        self.amp_scaler = torch.amp.GradScaler("cuda")
        self.clipper = NormClipper(max_norm)

    def fit(self, loader):
        for x, y in loader:
            self.optim.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.net(x, y)
            self.amp_scaler.scale(loss).backward()
            self.clipper(self.net.parameters())
            self.amp_scaler.step(self.optim)
            self.amp_scaler.update()


def train_plain(net, optim, loader):
    scaler = torch.amp.GradScaler("cuda")
    clip = NormClipper(1.0)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(x, y)
        scaler.scale(loss).backward()
        clip(net.parameters())

        scaler.update()
        optim.zero_grad()
