"""Gradual unfreezing: the encoder optimizer of a dict is zeroed between the scaled backward and the
loop that unscales and steps every optimizer of that dict, the encoder's too: its step finds no
inf checks recorded and raises."""
import torch


class Trainer:
    def __init__(self, model, optimizers, cfg):
        self.model = model
        self.optimizers = optimizers
        self.cfg = cfg
        self.epoch = 0
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch)
        self.scaler.scale(loss).backward()
        if self.epoch < self.cfg.freeze_encoder_epochs:
            self.optimizers["encoder"].zero_grad(set_to_none=True)  # error: AMP012
        for opt in self.optimizers.values():
            self.scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        for opt in self.optimizers.values():
            self.scaler.step(opt)
        self.scaler.update()
        for opt in self.optimizers.values():
            opt.zero_grad(set_to_none=True)
