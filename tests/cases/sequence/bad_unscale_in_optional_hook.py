"""A hook object built only when clipping is configured (``Hook(...) if cfg else None``) unscales;
the runner then unscales the same optimizer again to log the gradient norm."""
import torch


class ClipGradHook:
    def __init__(self, max_norm=35.0):
        self.max_norm = max_norm

    def after_backward(self, runner):
        runner.scaler.unscale_(runner.optimizer)
        torch.nn.utils.clip_grad_norm_(runner.model.parameters(), self.max_norm)


class Runner:
    def __init__(self, model, optimizer, clip_cfg=None):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.clip_hook = ClipGradHook(**clip_cfg) if clip_cfg else None

    def train_iter(self, batch):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(**batch)
        self.scaler.scale(loss).backward()
        if self.clip_hook is not None:
            self.clip_hook.after_backward(self)
        self.scaler.unscale_(self.optimizer)  # error: AMP005
        norm = torch.norm(torch.stack([p.grad.norm() for p in self.model.parameters() if p.grad is not None]))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item(), norm.item()
