from .trainer import GANTrainer
