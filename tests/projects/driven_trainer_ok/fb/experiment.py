"""An experiment class that owns its scaler and splits the step into helper methods."""
import torch


class Experiment:
    def __init__(self, model, loader, accumulation_steps=1):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
        self.accumulation_steps = accumulation_steps
        self.step = 0

    def run(self):
        for batch in self.loader:
            self.step += 1
            loss = self._forward_pass(batch)
            self._backward_pass(loss)

    def _forward_pass(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.model(batch) / self.accumulation_steps

    def _backward_pass(self, loss):
        self.scaler.scale(loss).backward()
        if self.step % self.accumulation_steps == 0:
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
