import torch

from asr.base import Trainer
from asr.noam import NoamTrainer


def main(cfg, model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp)
    trainer_cls = NoamTrainer if cfg.noam else Trainer
    trainer: Trainer = trainer_cls(model, optimizer, scaler, d_model=512)
    for feats, targets in loader:
        trainer.train_step(feats, targets)
