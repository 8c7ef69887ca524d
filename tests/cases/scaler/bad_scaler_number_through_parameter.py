import torch


def make_scaler(init_scale=2.0**16, growth_interval=2000):
    return torch.amp.GradScaler(init_scale, growth_interval=growth_interval)  # error: AMP016


def make_device_scaler(device="cuda"):
    return torch.amp.GradScaler(device)


def make_overridden(first=1024.0):
    return torch.amp.GradScaler(first)


def build():
    return make_scaler(), make_device_scaler(), make_overridden("cuda")
