import torch


class ContrastiveTrainer:
    def __init__(self, model, optimizer, temp_optimizer, scaler):
        self.model = model
        self.optimizer = optimizer
        self.temp_optimizer = temp_optimizer
        self.scaler = scaler

    def step(self, x):
        self.optimizer.zero_grad(set_to_none=True)
        self.temp_optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).mean()
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.temp_optimizer.step()  # error: AMP003
        self.scaler.update()
        return loss.item()


def train(model, optimizer, head_optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        head_optimizer.step()  # error: AMP003
