import torch


class GradNormLoggingMixin:
    """Logs the global gradient norm right after backward (a hook of the trainer in trainer.py)."""

    log_every = 100

    def on_after_backward(self):
        if self.global_step % self.log_every != 0:
            return
        norms = [p.grad.detach().norm(2) for p in self.policy.parameters() if p.grad is not None]
        if norms:
            self.log({"grad_norm": torch.stack(norms).norm(2).item()})

    def log(self, metrics):
        print(self.global_step, metrics)
