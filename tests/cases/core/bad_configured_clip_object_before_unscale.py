"""VQ-Diffusion-style solver: the clip is an object the configuration builds
(``instantiate_from_config``), kept as ``self.clip_grad_norm`` and called with the parameters
between the scaled backward and ``scaler.step``: it clips scaled gradients. The fp32 arm clips
real gradients."""
import torch

from .utils import instantiate_from_config


class Solver:
    def __init__(self, config, model, optimizer, args):
        self.model = model
        self.optimizer = optimizer
        self.args = args
        self.scaler = torch.amp.GradScaler("cuda") if args.amp else None
        if "clip_grad_norm" in config["solver"]:
            self.clip_grad_norm = instantiate_from_config(config["solver"]["clip_grad_norm"])
        else:
            self.clip_grad_norm = None

    def train_step(self, batch):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.args.amp):
            loss = self.model(**batch)["loss"]
        if self.args.amp:
            self.scaler.scale(loss).backward()
            if self.clip_grad_norm is not None:
                self.clip_grad_norm(self.model.parameters())  # error: AMP002
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            if self.clip_grad_norm is not None:
                self.clip_grad_norm(self.model.parameters())
            self.optimizer.step()
