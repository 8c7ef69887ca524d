"""A shared ``_run_batch(train)`` steps only when training but updates on every call; the
``@torch.no_grad()`` validation calls it with ``train=False``, so each validation batch updates
with no step since the last update (``No inf checks were recorded prior to update``). The update
also runs with gradients disabled (AMP201). The twin keeps the update under ``if train:``."""
import torch


class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.scaler = torch.amp.GradScaler("cuda")

    def _run_batch(self, clips, labels, train):
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.model(clips)
            loss = self.criterion(logits.float(), labels)
        if train:
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
        self.scaler.update()  # error: AMP006, AMP201
        return loss.detach(), logits.detach()

    def train_epoch(self, loader):
        for clips, labels in loader:
            self._run_batch(clips, labels, train=True)

    @torch.no_grad()
    def validate(self, loader):
        losses = []
        for clips, labels in loader:
            loss, _ = self._run_batch(clips, labels, train=False)
            losses.append(loss)
        return losses


class TwinTrainer(Trainer):
    def _run_batch(self, clips, labels, train):
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.model(clips)
            loss = self.criterion(logits.float(), labels)
        if train:
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.detach(), logits.detach()
