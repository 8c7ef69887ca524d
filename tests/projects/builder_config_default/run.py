import torch

from seg.factory import make_network
from seg.loop import fit_epoch
from seg.settings import TrainSettings


def main(batches):
    settings = TrainSettings()
    net = make_network(settings)
    optimizer = torch.optim.AdamW(net.parameters(), lr=settings.lr)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(settings.epochs):
        fit_epoch(net, optimizer, batches, scaler)
