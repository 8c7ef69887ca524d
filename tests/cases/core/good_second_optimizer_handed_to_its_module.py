"""Partial FC: the classifier's optimizer is handed to the module that runs the classifier's
own backward (in fp32, unscaled); the backbone's features get the scaled gradient, and only the
backbone's optimizer goes through the scaler. Stepping the classifier's optimizer directly is
right."""
import torch
from torch.nn.utils import clip_grad_norm_


class PFCTrainer:
    def __init__(self, model, optimizer, pfc_module, pfc_optimizer, grad_scaler):
        self.model = model
        self.optimizer = optimizer
        self.pfc_module = pfc_module
        self.pfc_optimizer = pfc_optimizer
        self.grad_scaler = grad_scaler

    def run_step(self, data):
        features, targets = self.model(data)
        f_grad, loss_v = self.pfc_module.forward_backward(features, targets, self.pfc_optimizer)
        features.backward(self.grad_scaler.scale(f_grad))
        self.grad_scaler.unscale_(self.optimizer)
        clip_grad_norm_(self.model.parameters(), max_norm=5)
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        self.pfc_optimizer.step()
        self.optimizer.zero_grad()
        self.pfc_optimizer.zero_grad()
        return loss_v


def main(model, pfc_module, loader):
    trainer = PFCTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1), pfc_module,
                         torch.optim.SGD(pfc_module.parameters(), lr=0.1), torch.amp.GradScaler("cuda"))
    for data in loader:
        trainer.run_step(data)
