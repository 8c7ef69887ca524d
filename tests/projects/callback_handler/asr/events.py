import torch


class Hook:
    def before_step(self, fitter): ...
    def after_step(self, fitter): ...


class EventBus:
    def __init__(self, hooks=()):
        self.hooks = list(hooks)

    def emit(self, name, fitter):
        for hook in self.hooks:
            getattr(hook, name)(fitter)


class GradMonitor(Hook):
    def __init__(self, every=100):
        self.every = every

    def before_step(self, fitter):
        if fitter.step % self.every == 0:
            fitter.amp_scaler.unscale_(fitter.optim)  # error: AMP005
            norms = [p.grad.norm() for p in fitter.net.parameters() if p.grad is not None]
            fitter.log["grad_norm"] = torch.stack(norms).norm().item()
