import torch

from ocr import OCRTrainer


def main(model, loader):
    trainer = OCRTrainer(model, torch.optim.AdamW(model.parameters()))
    for batch in loader:
        trainer.train_step(batch)
