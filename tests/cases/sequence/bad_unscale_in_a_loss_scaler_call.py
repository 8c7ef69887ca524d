"""An object whose ``__call__`` scales, unscales and (only when told to) steps and updates: the
training loop calls it on every micro-step, so the second micro-step unscales again before any
``update()``."""
import torch


class NativeScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        self._scaler.unscale_(optimizer)  # error: AMP005
        if update_grad:
            torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], 1.0)
            self._scaler.step(optimizer)
            self._scaler.update()


def train(model, loader, optimizer, accum):
    loss_scaler = NativeScaler()
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accum
        loss_scaler(loss, optimizer, update_grad=(i + 1) % accum == 0)
        if (i + 1) % accum == 0:
            optimizer.zero_grad()
