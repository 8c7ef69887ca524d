"""An AMP helper object tests its own flag in ``backward`` and again in ``step`` (ColBERT's
MixedPrecisionManager): the plain clip and ``optimizer.step()`` run only when it never scaled."""
import torch


class MixedPrecisionManager:
    def __init__(self, activated):
        self.activated = activated
        if self.activated:
            self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        if self.activated:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self, model, optimizer):
        if self.activated:
            self.scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            optimizer.step()
        optimizer.zero_grad()


def train(model, optimizer, loader, amp):
    amp = MixedPrecisionManager(amp)
    for x, y in loader:
        amp.backward(model(x, y))
        amp.step(model, optimizer)
