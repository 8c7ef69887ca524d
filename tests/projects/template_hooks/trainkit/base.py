import torch


class Trainer:
    """A template method: the subclass's hooks run between backward and step."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def before_optimizer_step(self):
        pass

    def training_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x, y)
        self.scaler.scale(loss).backward()
        return loss

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def fit(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            self.training_step(x, y)
            self.before_optimizer_step()
            self.optimizer_step()
