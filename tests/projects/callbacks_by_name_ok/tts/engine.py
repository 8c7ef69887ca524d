import torch


class Engine:
    """Owns the loop and fires its callbacks by event name at fixed points of each step."""

    def __init__(self, model, optimizer, loader, callbacks=(), fp16=True):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.callbacks = list(callbacks)
        self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)
        self.fp16 = fp16
        self.state = {}

    def _fire(self, event, **kwargs):
        for cb in self.callbacks:
            getattr(cb, event)(self, **kwargs)

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
            loss = self.model(batch)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self._fire("on_after_backward")
        self.scaler.unscale_(self.optimizer)
        self._fire("on_before_step")
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self._fire("on_after_step", loss=loss.item())

    def fit(self, epochs):
        for _ in range(epochs):
            for batch in self.loader:
                self.train_step(batch)
