"""Hooks run after every micro-step from a list of objects; one of them updates the scale, but
the trainer steps only every ``update_freq`` micro-steps: the update meets no step (AMP006)."""
import torch


class Hook:
    def after_train_iter(self, trainer):
        pass


class LossScaleHook(Hook):
    def after_train_iter(self, trainer):
        trainer.scaler.update()  # error: AMP006


class ThroughputHook(Hook):
    def after_train_iter(self, trainer):
        pass


class T:
    def __init__(self, model, optimizer, scaler):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.hooks = [LossScaleHook(), ThroughputHook()]

    def train_epoch(self, itr, update_freq):
        for i, (x, y) in enumerate(itr):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            if (i + 1) % update_freq == 0:
                self.scaler.step(self.optimizer)
                self.optimizer.zero_grad()
            for h in self.hooks:
                h.after_train_iter(self)
