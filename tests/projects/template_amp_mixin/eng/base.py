"""A template-method engine in plain fp32; subclasses override the step pieces."""
import torch


class EngineBase:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.iter = 0
        self.storage = {}

    def forward_loss(self, batch):
        raise NotImplementedError

    def backward(self, loss):
        loss.backward()

    def after_backward(self):
        pass

    def optimizer_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def after_step(self):
        pass

    def run_iter(self, batch):
        loss = self.forward_loss(batch)
        self.backward(loss)
        self.after_backward()
        self.optimizer_step()
        self.after_step()
        self.iter += 1
