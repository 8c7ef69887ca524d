"""An engine fires its callbacks by name through a bound ``getattr`` (``handler = getattr(cb,
event, None)``, then ``handler(self)``); a guard's ``after_backward`` zeroes the gradients between
the scaled backward and the step without skipping it."""
import torch


class Callback:
    def after_backward(self, engine):
        pass


class NonFiniteGuard(Callback):
    def after_backward(self, engine):
        if not torch.isfinite(engine.loss):
            engine.optimizer.zero_grad(set_to_none=True)  # error: AMP012


class Engine:
    def __init__(self, model, optimizer, callbacks):
        self.model, self.optimizer = model, optimizer
        self.callbacks = list(callbacks)
        self.scaler = torch.amp.GradScaler("cuda")

    def fire(self, event):
        for cb in self.callbacks:
            handler = getattr(cb, event, None)
            if handler is not None:
                handler(self)

    def train_batch(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            self.loss = self.model(x)
        self.scaler.scale(self.loss).backward()
        self.fire("after_backward")
        self.scaler.step(self.optimizer)
        self.scaler.update()
