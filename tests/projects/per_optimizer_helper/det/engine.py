"""The same engine, but the scale is updated after each optimizer's step: the second optimizer
meets a scaler whose update already cleared the first one's inf checks."""
from typing import List, Optional

import torch
from torch.amp import GradScaler

from .optim_utils import params_of, step_optimizer


class Trainer:
    def __init__(self, model, optimizers: List[torch.optim.Optimizer], loader, cfg,
                 scaler: Optional[GradScaler] = None):
        self.model = model
        self.optimizers = optimizers
        self.loader = loader
        self.cfg = cfg
        self.scaler = scaler

    def train_one_epoch(self):
        self.model.train()
        for images, targets in self.loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None):
                loss = sum(self.model(images, targets).values())
            for opt in self.optimizers:
                opt.zero_grad(set_to_none=True)
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
            for opt in self.optimizers:
                step_optimizer(opt, params_of(opt), scaler=self.scaler, max_norm=self.cfg.clip_max_norm)
                if self.scaler is not None:
                    self.scaler.update()  # error: AMP007
