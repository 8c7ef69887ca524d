import torch


class AMPBaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def clip_gradients(self):
        return None

    def train_step(self, batch):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch)
        self.scaler.scale(loss).backward()
        norm = self.clip_gradients()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach(), norm
