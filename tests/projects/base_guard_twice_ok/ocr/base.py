import torch


class BaseTrainer:
    """A template method with hooks; the clip hook is guarded by the clip setting."""

    def __init__(self, model, optimizer, max_grad_norm=0.0, accum_steps=1):
        self.model = model
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.accum_steps = accum_steps

    def backward(self, loss):
        loss.backward()

    def before_optimizer_step(self):
        if self.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)

    def optimizer_step(self):
        self.optimizer.step()

    def train_step(self, batch, micro_idx):
        loss = self.model(batch)
        self.backward(loss / self.accum_steps)
        if (micro_idx + 1) % self.accum_steps == 0:
            self.before_optimizer_step()
            self.optimizer_step()
            self.optimizer.zero_grad(set_to_none=True)

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for i, batch in enumerate(loader):
                self.train_step(batch, i)
