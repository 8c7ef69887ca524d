"""Checkpoint helpers: the run that builds the scaler hands it to the trainer, not to these."""
import torch


def save_checkpoint(path, step, unet, optimizer):
    torch.save({
        "step": step,
        "unet": unet.state_dict(),
        "optimizer": optimizer.state_dict(),
    }, path)


def load_checkpoint(path, unet, optimizer):
    sd = torch.load(path, map_location="cpu")
    unet.load_state_dict(sd["unet"])
    optimizer.load_state_dict(sd["optimizer"])
    return sd["step"]
