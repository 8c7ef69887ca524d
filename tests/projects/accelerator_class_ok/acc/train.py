import torch

from acc.accelerator import Accelerator


def main(model, loader):
    accelerator = Accelerator(mixed_precision="fp16")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    for x, y in loader:
        loss = model(x, y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
