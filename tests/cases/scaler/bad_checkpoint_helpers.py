import shutil

import torch
import torch.nn.functional as F


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def main(model, optimizer, loader, epochs):
    scaler = torch.amp.GradScaler("cuda")
    best = 0.0
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        acc = 0.5
        save_checkpoint(  # error: AMP013
            {"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best, "optimizer": optimizer.state_dict()},
            acc > best,
        )


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.epoch = 0

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def _checkpoint(self):
        return {"model": self.model.state_dict(), "optim": self.optimizer.state_dict(), "epoch": self.epoch}

    def save(self, path):
        torch.save(self._checkpoint(), path)  # error: AMP013


class Engine:
    """The checkpoint state is handed to a checkpointer of another module."""

    def __init__(self, model, optimizer, checkpointer):
        self.model = model
        self.optimizer = optimizer
        self.checkpointer = checkpointer
        self._scaler = torch.amp.GradScaler("cuda") if torch.cuda.is_available() else None

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(self.model(x), y)
        if self._scaler is not None:
            self._scaler.scale(loss).backward()
            self._scaler.step(self.optimizer)
            self._scaler.update()
        else:
            loss.backward()
            self.optimizer.step()

    def get_checkpoint_state(self):
        model_state = self.model.state_dict()
        training_states = {  # error: AMP013
            "optimizer": self.optimizer.state_dict(),
            "epochs_completed": 3,
        }
        return (model_state, training_states)
