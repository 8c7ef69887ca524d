"""The twin of ``bad_unscale_in_a_loss_scaler_call.py``: the object unscales only on the calls
that step and update, and the trainer receives it as a parameter."""
import torch


class NativeScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], 1.0)
            self._scaler.step(optimizer)
            self._scaler.update()


def train_one_epoch(model, loader, optimizer, loss_scaler, accum):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accum
        loss_scaler(loss, optimizer, update_grad=(i + 1) % accum == 0)
        if (i + 1) % accum == 0:
            optimizer.zero_grad()


def main(model, loader, args):
    optimizer = torch.optim.AdamW(model.parameters())
    loss_scaler = NativeScaler()
    for _ in range(args.epochs):
        train_one_epoch(model, loader, optimizer, loss_scaler, args.accum)
