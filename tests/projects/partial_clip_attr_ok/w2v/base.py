"""The base trainer binds its clip as a partial; subclasses call ``self.clip_fn(params)``."""
import functools

import torch


class PretrainTrainer:
    def __init__(self, model, optimizer, cfg):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda", enabled=cfg.fp16)
        self.clip_fn = functools.partial(torch.nn.utils.clip_grad_norm_, max_norm=cfg.clip_norm)

    def train_step(self, batch):
        raise NotImplementedError

    def run_step(self, batch):
        self.optimizer.zero_grad(set_to_none=True)
        logs = self.train_step(batch)
        self.scaler.update()
        return logs
