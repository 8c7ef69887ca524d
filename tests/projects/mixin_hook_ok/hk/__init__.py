from .trainers import ClassifierTrainer

__all__ = ["ClassifierTrainer"]
