from .sub import OCRTrainer
