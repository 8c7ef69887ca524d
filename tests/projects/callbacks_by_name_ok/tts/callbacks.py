import torch


class Callback:
    def on_after_backward(self, engine):
        pass

    def on_before_step(self, engine):
        pass

    def on_after_step(self, engine, **kwargs):
        pass


class GradClipCallback(Callback):
    """Clips before the step, after the engine unscaled the gradients."""

    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def on_before_step(self, engine):
        engine.state["grad_norm"] = torch.nn.utils.clip_grad_norm_(engine.model.parameters(), self.max_norm)


class LossLogger(Callback):
    def on_after_step(self, engine, **kwargs):
        engine.state["loss"] = kwargs["loss"]
