"""A subclass overrides the base trainer's ``apply_gradients`` to add a schedule and drops
``update()``: every instance of it steps without updating."""
import torch


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def apply_gradients(self):
        self.grad_scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()

    def train_step(self, batch):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(**batch)
        self.grad_scaler.scale(loss).backward()
        self.apply_gradients()
        return loss


class ScheduledTrainer(BaseTrainer):
    def __init__(self, model, optimizer, schedule):
        super().__init__(model, optimizer)
        self.schedule = schedule

    def apply_gradients(self):
        for group in self.optimizer.param_groups:
            group["lr"] = self.schedule(group["lr"])
        self.grad_scaler.step(self.optimizer)  # error: AMP001


class WarmTrainer(BaseTrainer):
    def apply_gradients(self):
        for group in self.optimizer.param_groups:
            group["lr"] *= 0.5
        super().apply_gradients()
