import torch
from torch import nn


def make_network(opts):
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, opts.classes, 1))
    net = net.cuda()
    if opts.mixed:
        net = net.half()  # error: AMP014
    return net


def make_optimizer(net, opts):
    trainable = [p for p in net.parameters() if p.requires_grad]
    return torch.optim.AdamW(trainable, lr=opts.lr, weight_decay=opts.wd)


def make_scaler(opts):
    return torch.amp.GradScaler("cuda", enabled=opts.mixed)
