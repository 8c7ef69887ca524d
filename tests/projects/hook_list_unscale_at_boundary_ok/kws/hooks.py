"""Hooks the trainer calls by name at fixed points of an iteration; the clip hook unscales once,
at the accumulation boundary, before the trainer's ``scaler.step``."""
import torch


class Hook:
    priority = 50

    def before_iter(self, trainer):
        pass

    def after_backward(self, trainer):
        pass

    def after_iter(self, trainer):
        pass


class GradClipHook(Hook):
    priority = 10

    def __init__(self, max_norm=5.0):
        self.max_norm = max_norm

    def after_backward(self, trainer):
        if not trainer.is_boundary:
            return
        if trainer.scaler is not None:
            trainer.scaler.unscale_(trainer.optimizer)
        trainer.log["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), self.max_norm))


class LoggerHook(Hook):
    def after_iter(self, trainer):
        print(trainer.iter, trainer.log)
