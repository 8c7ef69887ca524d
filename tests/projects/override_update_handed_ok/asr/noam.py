from .base import Trainer


class NoamTrainer(Trainer):
    """Overrides the step and keeps the update."""

    def __init__(self, model, optimizer, scaler, d_model, warmup=25000):
        super().__init__(model, optimizer, scaler)
        self.d_model = d_model
        self.warmup = warmup
        self.updates = 0

    def apply_gradients(self):
        self.updates += 1
        lr = self.d_model ** -0.5 * min(self.updates ** -0.5, self.updates * self.warmup ** -1.5)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.scaler.step(self.optimizer)
        self.scaler.update()
