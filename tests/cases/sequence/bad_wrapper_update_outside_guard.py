import torch


class AccumulatingScaler:
    """A loss-scaler wrapper (timm/BEiT shape) whose update was dedented out of the guard."""

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.step(optimizer)
        self._scaler.update()  # error: AMP006


class GoodAccumulatingScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.unscale_(optimizer)
            self._scaler.step(optimizer)
            self._scaler.update()


def finish_step(scaler):
    # only updates: whoever calls it has stepped (no backward here to judge by)
    scaler.update()
