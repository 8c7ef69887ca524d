import torch

from .amp_backend import AmpBackend
from sft.checkpoint import CheckpointMixin


class SFTTrainer(CheckpointMixin):
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.amp = AmpBackend(cfg.precision)

    def train(self, loader):
        for i, batch in enumerate(loader):
            with self.amp.autocast():
                loss = self.model(batch) / self.cfg.accum
            self.amp.backward(loss)
            if (i + 1) % self.cfg.accum:
                continue
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)  # error: AMP002
            self.amp.step(self.optimizer)
            self.optimizer.zero_grad(set_to_none=True)
            if i % 1000 == 0:
                self.save_checkpoint(f"ckpt-{i}.pt")
