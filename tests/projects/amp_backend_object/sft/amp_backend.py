import torch


class AmpBackend:
    """The trainer calls ``backward``/``unscale``/``step`` whatever the precision."""

    def __init__(self, precision: str):
        self.dtype = torch.float16 if precision == "fp16" else torch.bfloat16
        self.scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def autocast(self):
        return torch.autocast("cuda", dtype=self.dtype)

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def unscale(self, optimizer):
        self.scaler.unscale_(optimizer)

    def step(self, optimizer):
        self.scaler.step(optimizer)
        self.scaler.update()
