import torch

from asr import Fitter, GradMonitor


def main(net, batches):
    optim = torch.optim.AdamW(net.parameters(), lr=1e-3)
    Fitter(net, optim, hooks=[GradMonitor(every=50)]).fit(batches)
