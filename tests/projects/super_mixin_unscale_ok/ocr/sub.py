"""The subclass overrides the template method and calls it through super(): its hooks dispatch
on the subclass, and the mixin's clip_gradients is the only unscale_ of the step."""
from .base import AMPBaseTrainer
from .mixins import GradClipMixin


class OCRTrainer(GradClipMixin, AMPBaseTrainer):
    def train_step(self, batch):
        loss, norm = super().train_step(batch)
        self.steps = getattr(self, "steps", 0) + 1
        return loss, norm
