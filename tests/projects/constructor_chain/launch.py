import torch

from fitkit.experiment import Experiment


def main(cfg):
    grad_scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    exp = Experiment(cfg, grad_scaler)
    exp.run()
