"""A model builder returns an fp16 model; the caller hands it to a fitter object (built inline,
``Fitter(cfg).run(net, data)``) whose optimizer a GradScaler steps."""
import torch


def create_network(cfg):
    net = torch.nn.Sequential(torch.nn.Linear(cfg.width, cfg.width), torch.nn.ReLU(), torch.nn.Linear(cfg.width, 1))
    return net.to(device="cuda", dtype=torch.float16)  # error: AMP014


class Fitter:
    def __init__(self, cfg):
        self.cfg = cfg
        self.scaler = torch.amp.GradScaler("cuda")

    def run(self, net, data):
        optim = torch.optim.AdamW(net.parameters(), lr=self.cfg.lr)
        for x, y in data:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(net(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.step(optim)
            self.scaler.update()
            optim.zero_grad()


def main(cfg, data):
    net = create_network(cfg)
    Fitter(cfg).run(net, data)
