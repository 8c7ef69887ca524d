"""The engine gets the scaler from the runner, which gets it from the entry point: it steps and
never updates, and nothing that drives it updates either."""
import torch


class Engine:
    def __init__(self, model, optimizer, scaler):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler

    def train_step(self, images, targets):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(images, targets)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)  # error: AMP001
        return loss.item()
