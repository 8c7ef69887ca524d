import torch


class Trainer:
    def __init__(self, model, optimizer, scheduler):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.scaler = torch.amp.GradScaler("cuda")

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)  # error: AMP002
        self.optimizer.step()  # error: AMP003
        self.optimizer.zero_grad(set_to_none=True)

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.optimizer_step()
