import torch


class Trainer:
    """The script builds the scaler and hands it in; the base class updates it."""

    def __init__(self, model, optimizer, scaler: torch.amp.GradScaler, clip=5.0, **kwargs):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.clip = clip

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
