import torch

from .base import PretrainTrainer


class Wav2Vec2Trainer(PretrainTrainer):
    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch["source"])
        self.scaler.scale(loss).backward()
        grad_norm = self.clip_fn(self.model.parameters())  # error: AMP002
        self.scaler.step(self.optimizer)
        return {"loss": loss.item(), "grad_norm": grad_norm.item()}
