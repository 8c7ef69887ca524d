import torch


class AmpHelper:
    def __init__(self, enabled=True):
        self.scaler = torch.amp.GradScaler("cuda") if enabled else None

    def backward(self, loss):
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self, optimizer):
        if self.scaler is not None:
            self.scaler.step(optimizer)
        else:
            optimizer.step()

    def update(self):
        if self.scaler is not None:
            self.scaler.update()  # error: AMP006
