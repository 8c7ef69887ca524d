import torch
import torch.nn.functional as F


class Trainer:
    """Saves the scaler through a dict built elsewhere; only the load is visible here."""

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def save(self, path, extra):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), **extra}, path)

    def resume(self, path):
        ckpt = torch.load(path)
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scaler.load_state_dict(ckpt["scaler"])
