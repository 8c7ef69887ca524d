import torch

from ctc.engine import Engine


class Runner:
    def __init__(self, model, scaler, lr):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.engine = Engine(self.model, self.optimizer, scaler)

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for images, targets in loader:
                self.engine.train_step(images.cuda(), targets.cuda())
