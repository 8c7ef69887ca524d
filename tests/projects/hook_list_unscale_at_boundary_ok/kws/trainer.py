import torch

from .hooks import GradClipHook, LoggerHook


class Trainer:
    def __init__(self, model, optimizer, loader, cfg, hooks=()):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.accum_steps = cfg.accum_steps
        self.scaler = torch.amp.GradScaler("cuda") if cfg.precision == "fp16" else None
        self.hooks = sorted(hooks, key=lambda h: h.priority)
        self.iter = 0
        self.log = {}

    def call_hook(self, name):
        for hook in self.hooks:
            getattr(hook, name)(self)

    @property
    def is_boundary(self):
        return (self.iter + 1) % self.accum_steps == 0

    def run_iter(self, x, y):
        self.call_hook("before_iter")
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss / self.accum_steps).backward()
        else:
            (loss / self.accum_steps).backward()
        self.call_hook("after_backward")
        if self.is_boundary:
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        self.call_hook("after_iter")
        self.iter += 1

    def train(self, epochs):
        for _ in range(epochs):
            for x, y in self.loader:
                self.run_iter(x, y)


def main(model, optimizer, loader, cfg):
    Trainer(model, optimizer, loader, cfg, hooks=[GradClipHook(), LoggerHook()]).train(cfg.epochs)
