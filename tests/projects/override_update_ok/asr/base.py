import torch


class Trainer:
    def __init__(self, model, optimizer, clip=5.0):
        self.model = model
        self.optimizer = optimizer
        self.clip = clip
        self.scaler = torch.amp.GradScaler("cuda")

    def apply_gradients(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def train_step(self, feats, targets):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(feats, targets)
        self.scaler.scale(loss).backward()
        self.apply_gradients()
        return loss.item()
