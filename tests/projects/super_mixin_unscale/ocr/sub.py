"""The subclass overrides the template method and calls it through super(): its hooks still
dispatch on the subclass, so the mixin's clip_gradients runs after the base's own unscale_."""
from .base import AMPBaseTrainer
from .mixins import GradClipMixin


class OCRTrainer(GradClipMixin, AMPBaseTrainer):
    def train_step(self, batch):
        loss, norm = super().train_step(batch)
        self.steps = getattr(self, "steps", 0) + 1
        return loss, norm
