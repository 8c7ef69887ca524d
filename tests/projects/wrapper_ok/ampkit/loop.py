import torch

from .wrapper import AmpOptimizerWrapper


def train(model, optimizer, loader):
    wrapper = AmpOptimizerWrapper(optimizer)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        wrapper.backward(loss)
        wrapper.step(model.parameters())
