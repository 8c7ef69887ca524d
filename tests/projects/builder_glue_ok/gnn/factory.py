import torch


def create_network(cfg):
    net = torch.nn.Sequential(torch.nn.Linear(cfg.in_dim, cfg.hidden), torch.nn.ReLU(), torch.nn.Linear(cfg.hidden, 1))
    net = net.to(device="cuda")
    return net


def create_export_network(cfg):
    return create_network(cfg).half().eval()
