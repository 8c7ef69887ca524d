"""A static helper that saves the optimizer it is handed (EveryDream2 style): no scaler is in its
reach, so it is not the scaler owner's checkpoint."""
import torch


class EveryDreamOptimizer:
    def __init__(self, optimizer, amp=True):
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp)

    def step(self, loss):
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)

    @staticmethod
    def _save_optimizer(optimizer, path: str):
        torch.save(optimizer.state_dict(), path)
