"""The same callable clipper, called after ``unscale_``: the gradients it clips are the true ones."""
import torch


class NormClipper:
    def __init__(self, max_norm):
        self.max_norm = max_norm

    def __call__(self, parameters):
        return torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)


class Trainer:
    def __init__(self, net, optim, max_norm=5.0):
        self.net = net
        self.optim = optim
        self.amp_scaler = torch.amp.GradScaler("cuda")
        self.clipper = NormClipper(max_norm) if max_norm else None

    def fit(self, loader):
        for x, y in loader:
            self.optim.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.net(x, y)
            self.amp_scaler.scale(loss).backward()
            if self.clipper is not None:
                self.amp_scaler.unscale_(self.optim)
                self.clipper(self.net.parameters())
            self.amp_scaler.step(self.optim)
            self.amp_scaler.update()
