from .scaling import ScaledOptimizer

__all__ = ["ScaledOptimizer"]
