import torch

from .losses import DiceBCELoss


class SegEngine:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = DiceBCELoss(bce_weight=0.3)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, images, masks):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.criterion(self.model(images), masks)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()
