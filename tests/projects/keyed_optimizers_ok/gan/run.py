import torch

from .runner import GANRunner


def main(cfg, G, D, loader, loss_fn):
    scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp)
    runner = GANRunner(G, D, scaler, cfg.max_grad_norm)
    runner.fit(loader, loss_fn, cfg.iters)
