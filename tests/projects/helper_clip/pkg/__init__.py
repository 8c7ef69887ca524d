from .optim_utils import clip_gradients, step_optimizer

__all__ = ["clip_gradients", "step_optimizer"]
