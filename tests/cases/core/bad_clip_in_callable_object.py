"""A gradient clipper kept as an attribute and called like a function (its ``__call__``) between
the scaled backward and the step: it clips still-scaled gradients."""
import torch


class NormClipper:
    def __init__(self, max_norm):
        self.max_norm = max_norm
        self.history = []

    def __call__(self, parameters):
        norm = torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)  # error: AMP002
        self.history.append(float(norm))
        return norm


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
        scaler.step(optim)
        scaler.update()
        optim.zero_grad()
