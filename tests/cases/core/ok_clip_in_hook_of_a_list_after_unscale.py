"""A runner calls each hook of a list right after its unscale_: the hooks are objects of several
known classes, and the call runs one of their methods on each pass; the grad-norm hook reads
unscaled gradients."""
import torch


class LoggerHook:
    def after_backward(self, runner):
        runner.log["loss"] = runner.loss.item()


class GradNormHook:
    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def after_backward(self, runner):
        runner.log["grad_norm"] = torch.nn.utils.clip_grad_norm_(runner.model.parameters(), self.max_norm)


class Runner:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.hooks = [LoggerHook(), GradNormHook(max_norm=5.0)]
        self.log = {}
        self.loss = None

    def train_iter(self, x, y):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            self.loss = self.model(x, y)
        self.scaler.scale(self.loss).backward()
        self.scaler.unscale_(self.optimizer)
        for hook in self.hooks:
            hook.after_backward(self)
        self.scaler.step(self.optimizer)
        self.scaler.update()


def main(model, optimizer, loader):
    runner = Runner(model, optimizer)
    for x, y in loader:
        runner.train_iter(x, y)
