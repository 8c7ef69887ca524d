"""Mixed-precision overrides of the engine's step pieces."""
import torch


class AmpMixin:
    def init_amp(self, enabled):
        self.scaler = torch.amp.GradScaler("cuda", enabled=enabled)

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
