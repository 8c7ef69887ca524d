from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class TrainState:
    step: int = 0
    scaler: Optional[torch.amp.GradScaler] = None


class BaseTrainer:
    def __init__(self, model, optimizer, cfg):
        self.model = model
        self.optimizer = optimizer
        self.state = TrainState(scaler=torch.amp.GradScaler("cuda") if cfg.fp16 else None)

    def backward(self, loss):
        scaler = self.state.scaler
        if scaler is not None:
            scaler.scale(loss).backward()
        else:
            loss.backward()

    def optimizer_step(self):
        scaler = self.state.scaler
        if scaler is not None:
            scaler.step(self.optimizer)
            scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad()

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.state.scaler is not None):
            loss = self.model(batch)
        self.backward(loss)
        self.optimizer_step()
        self.state.step += 1
