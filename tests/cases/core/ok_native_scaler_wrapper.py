import torch


class LossScaler:
    """A wrapper that owns the GradScaler and does the whole protocol in one call."""

    state_dict_key = "amp_scaler"

    def __init__(self, device="cuda"):
        self._scaler = torch.amp.GradScaler(device)

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, need_update=True):
        self._scaler.scale(loss).backward()
        if need_update:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
            self._scaler.step(optimizer)
            self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)


def train_one_epoch(model, loader, optimizer, loss_scaler, accum=1):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss_scaler(loss, optimizer, clip_grad=5.0, parameters=model.parameters(), need_update=(i + 1) % accum == 0)
        if (i + 1) % accum == 0:
            optimizer.zero_grad()


def main(model, loader, optimizer):
    scaler = LossScaler()
    for _epoch in range(10):
        train_one_epoch(model, loader, optimizer, scaler)
