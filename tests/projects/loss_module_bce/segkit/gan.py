"""A plain loss function of another module, called under autocast: its BCE raises (reported there)."""
import torch

from .losses import d_loss


def train_discriminator(D, G, loader, optimizer, scaler):
    for real, z in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = d_loss(D(real), D(G(z).detach()))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
