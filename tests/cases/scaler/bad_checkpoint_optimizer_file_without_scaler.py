"""A trainer that saves its training state as separate files (weights, optimizer, scheduler)
and none for the scaler: a resume restarts the loss scale at 65536 (torch4keras style)."""
import os

import torch


class Trainer:
    def __init__(self, model, optimizer, scheduler=None, fp16=True):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(**batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.item()

    def save_to_checkpoint(self, save_dir):
        os.makedirs(save_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(save_dir, "model.pt"))
        torch.save(self.optimizer.state_dict(), os.path.join(save_dir, "optimizer.pt"))  # error: AMP013
        if self.scheduler is not None:
            torch.save(self.scheduler.state_dict(), os.path.join(save_dir, "scheduler.pt"))
