import torch


class LoopTrainer:
    def __init__(self, model, optimizer, max_norm=1.0):
        self.model, self.optimizer, self.max_norm = model, optimizer, max_norm
        self.scaler = torch.amp.GradScaler("cuda")

    def before_step(self):
        pass

    def compute_loss(self, x, y):
        raise NotImplementedError

    def run(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.compute_loss(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)  # the hook sees true gradients
            self.before_step()
            self.scaler.step(self.optimizer)
            self.scaler.update()
