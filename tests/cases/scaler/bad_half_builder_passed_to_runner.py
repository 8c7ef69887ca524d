"""A model builder converts the network to fp16 under a memory flag and its result goes straight
into the constructor of the runner that builds the optimizer and the GradScaler: with the flag
on, the first `scaler.step()` raises "Attempting to unscale FP16 gradients"."""
import torch


def build_model(cfg, make_net, device):
    net = make_net().to(device)
    if cfg.low_mem:
        net = net.half()  # error: AMP014
    return net


class Runner:
    def __init__(self, cfg, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_epoch(self, loader):
        for img, lab in loader:
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(img, lab)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()


def main(cfg, make_net, loader):
    runner = Runner(cfg, build_model(cfg, make_net, torch.device("cuda")))
    for _ in range(cfg.epochs):
        runner.train_epoch(loader)
