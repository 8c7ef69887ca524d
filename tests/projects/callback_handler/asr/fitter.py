import torch

from .events import EventBus


class Fitter:
    def __init__(self, net, optim, hooks=()):
        self.net = net
        self.optim = optim
        self.amp_scaler = torch.amp.GradScaler("cuda")
        self.bus = EventBus(hooks)
        self.step = 0
        self.log = {}

    def fit(self, batches):
        for feats, targets in batches:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.net(feats, targets)
            self.amp_scaler.scale(loss).backward()
            self.amp_scaler.unscale_(self.optim)
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), 5.0)
            self.bus.emit("before_step", self)
            self.amp_scaler.step(self.optim)
            self.amp_scaler.update()
            self.optim.zero_grad(set_to_none=True)
            self.step += 1
            self.bus.emit("after_step", self)
