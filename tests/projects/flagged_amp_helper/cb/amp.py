"""ColBERT's MixedPrecisionManager: the flag chosen at construction is tested again in each
method, so the plain clip and ``optimizer.step()`` run only when nothing was scaled."""
from contextlib import nullcontext

import torch


class MixedPrecisionManager:
    def __init__(self, activated):
        self.activated = activated
        if self.activated:
            self.scaler = torch.amp.GradScaler("cuda")

    def context(self):
        return torch.autocast("cuda", dtype=torch.float16) if self.activated else nullcontext()

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
