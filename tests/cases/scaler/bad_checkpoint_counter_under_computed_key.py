"""Computed keys whose values are counters (an f-string key for the epoch) do not hide what the
checkpoint lacks: it has the optimizer's state and not the scaler's."""
import torch


class Trainer:
    OPT_KEY = "optimizer_state"

    def __init__(self, net, optim):
        self.net = net
        self.optim = optim
        self.epoch = 0
        self.scaler = torch.amp.GradScaler("cuda")

    def resume(self, path):
        state = torch.load(path)
        self.net.load_state_dict(state["net"])
        self.epoch = state["epoch_last"] + 1

    def run_epoch(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.net(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optim)
            self.scaler.update()
            self.optim.zero_grad()
        self.epoch += 1

    def save(self, path, tag="epoch"):
        torch.save({"net": self.net.state_dict(), self.OPT_KEY: self.optim.state_dict(), f"{tag}_last": self.epoch}, path)  # error: AMP013
