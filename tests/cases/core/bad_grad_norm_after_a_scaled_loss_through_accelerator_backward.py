"""SCNet-style solver: the loss is scaled by the solver's own GradScaler and back-propagated with
``accelerator.backward(scaled_loss)`` (an Accelerator without mixed precision just calls
``backward`` on it). The gradient norm logged before ``scaler.step`` is the scale times too large;
the twin unscales first."""
import torch
from accelerate import Accelerator


class Solver:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, mix, sources, losses):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(mix).float(), sources)
        scaled_loss = self.scaler.scale(loss)
        self.accelerator.backward(scaled_loss)
        grad_norm = 0
        for p in self.model.parameters():
            if p.grad is not None:
                grad_norm += p.grad.data.norm() ** 2  # error: AMP002
        losses["grad"] = grad_norm ** 0.5
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_step_unscaled_first(self, mix, sources, losses):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(mix).float(), sources)
        self.accelerator.backward(self.scaler.scale(loss))
        self.scaler.unscale_(self.optimizer)
        losses["grad"] = sum(p.grad.norm() ** 2 for p in self.model.parameters() if p.grad is not None) ** 0.5
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
