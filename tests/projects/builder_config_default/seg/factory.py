from torch import nn

from .settings import TrainSettings


def make_network(settings: TrainSettings) -> nn.Module:
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, settings.classes, 1))
    if settings.half_weights:
        net = net.half()  # error: AMP014
    return net.cuda()
