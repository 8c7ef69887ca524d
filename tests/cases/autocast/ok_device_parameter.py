import torch


def forward_amp(model, x, device_type):
    with torch.autocast(device_type, dtype=torch.float16):
        return model(x)


def forward_mixed(model, x, device):
    # one caller passes the device's type: the parameter is not only a torch.device
    with torch.autocast(device, dtype=torch.float16):
        return model(x)


def never_called(model, x, device):
    # no caller in this file: a string is as likely as a torch.device
    with torch.autocast(device, dtype=torch.float16):
        return model(x)


def main(model, x):
    device = torch.device("cuda")
    forward_amp(model, x, device.type)
    forward_amp(model, x, "cuda")
    forward_mixed(model, x, device)
    forward_mixed(model, x, device.type)
