"""The same loop, but the clip comes before any ``unscale_``: it meets scaled gradients."""
import torch


class AdversarialUpdater:
    order = ("D", "G")

    def __init__(self, optimizers, *, scaler, max_grad_norm=None):
        self.optimizers = optimizers
        self.scaler = scaler
        self.max_grad_norm = max_grad_norm

    def step(self, real, loss_fn, nets):
        for name in self.order:
            opt = self.optimizers[name]
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = loss_fn(name, real)
            self.scaler.scale(loss).backward()
            if self.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(nets[name].parameters(), self.max_grad_norm)  # error: AMP002
            self.scaler.step(opt)
        self.scaler.update()
