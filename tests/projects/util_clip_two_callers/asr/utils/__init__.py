from .grad import clip_grads

__all__ = ["clip_grads"]
