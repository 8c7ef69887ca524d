"""An AMP helper object tests its own flag in ``backward`` and in ``step`` (ColBERT's
MixedPrecisionManager); the trainer clips between the two calls, on the gradients the helper's
backward scaled when the flag is on (the helper's own clip after ``unscale_`` is right)."""
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

    def step(self, optimizer):
        if self.activated:
            self.scaler.unscale_(optimizer)
            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad()


def train(model, optimizer, loader, amp):
    amp = MixedPrecisionManager(amp)
    for x, y in loader:
        amp.backward(model(x, y))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
        amp.step(optimizer)
