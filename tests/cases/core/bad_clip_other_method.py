import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def clip_gradients(self, max_norm=1.0):
        return torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm)  # error: AMP002

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(**batch).loss
        self.scaler.scale(loss).backward()
        norm = self.clip_gradients()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.detach(), norm
