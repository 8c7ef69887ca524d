import torch

SUPPORTED_CONTEXTS = {
    torch.amp.autocast_mode.autocast: "autocast",
    torch.cuda.amp.autocast: "autocast (deprecated spelling)",
}
KNOWN = [torch.amp.autocast, torch.cuda.amp.autocast, torch.cpu.amp.autocast]


def device_of(func):
    if func is torch.cuda.amp.autocast:
        return "cuda"
    if func in (torch.cpu.amp.autocast,):
        return "cpu"
    return None


def is_scaler(obj):
    return isinstance(obj, (torch.cuda.amp.GradScaler, torch.cpu.amp.GradScaler))  # error: AMP101, AMP101


def make():
    return torch.cuda.amp.GradScaler()  # error: AMP101
