import torch


class BaseTrainer:
    def __init__(self, model, optimizer, amp):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp)

    def training_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.scaler.scale(loss).backward()
        return loss.detach()

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)

    def fit(self, loader):
        for x, y in loader:
            self.training_step(x, y)
            self.optimizer_step()
