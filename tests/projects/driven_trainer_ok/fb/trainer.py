"""A trainer whose AMP and fp32 paths are branches on one config flag, tested in several places;
a script and a pytest test drive it from other modules."""
import torch
from torch.amp import GradScaler, autocast


class Trainer:
    def __init__(self, config, model, loader):
        self.config = config
        self.model = model
        self.loader = loader

    def train(self):
        model = self.model
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.config.lr)
        if self.config.mixed_precision:
            scaler = GradScaler("cuda")
        i = 0
        for epoch in range(self.config.epochs):
            for batch in self.loader:
                i += 1
                if self.config.mixed_precision:
                    with autocast("cuda", dtype=torch.float16):
                        loss = model(batch)
                else:
                    loss = model(batch)
                loss = loss / self.config.accumulation
                if self.config.mixed_precision:
                    scaler.scale(loss).backward()
                    if i % self.config.accumulation == 0:
                        if self.config.clip > 0:
                            scaler.unscale_(optimizer)
                            torch.nn.utils.clip_grad_norm_(model.parameters(), self.config.clip)
                        scaler.step(optimizer)
                        scaler.update()
                        optimizer.zero_grad()
                else:
                    loss.backward()
                    if i % self.config.accumulation == 0:
                        if self.config.clip > 0:
                            torch.nn.utils.clip_grad_norm_(model.parameters(), self.config.clip)
                        optimizer.step()
                        optimizer.zero_grad()
