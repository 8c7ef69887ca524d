import torch

from seg import GlobalNormClipper


class SegTrainer:
    def __init__(self, model, optimizer, max_norm=1.0):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.clip = GlobalNormClipper(max_norm) if max_norm else None

    def train_epoch(self, loader):
        for images, masks in loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(images, masks)
            self.scaler.scale(loss).backward()
            if self.clip is not None:
                self.clip(self.model)
            self.scaler.step(self.optimizer)
            self.scaler.update()
