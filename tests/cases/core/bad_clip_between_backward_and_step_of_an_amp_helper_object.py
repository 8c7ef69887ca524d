"""The trainer calls ``backward``/``step`` of an AMP helper object of its own class; the clip
between them sees the gradients the helper's backward scaled."""
import torch


class AmpHelper:
    def __init__(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def step(self, optimizer):
        self.scaler.step(optimizer)
        self.scaler.update()


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.amp = AmpHelper()

    def fit(self, loader):
        for x, y in loader:
            self.amp.backward(self.model(x, y))
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)  # error: AMP002
            self.amp.step(self.optimizer)
            self.optimizer.zero_grad()
