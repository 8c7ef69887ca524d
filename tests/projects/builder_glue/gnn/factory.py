import torch


def create_network(cfg):
    net = torch.nn.Sequential(torch.nn.Linear(cfg.in_dim, cfg.hidden), torch.nn.ReLU(), torch.nn.Linear(cfg.hidden, 1))
    net = net.to(device="cuda", dtype=torch.float16)  # error: AMP014
    return net
