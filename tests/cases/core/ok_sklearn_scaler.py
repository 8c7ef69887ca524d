import numpy as np
import torch
from sklearn.preprocessing import StandardScaler


def predict(model, features: np.ndarray):
    scaler = StandardScaler()
    scaler.fit(features)
    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(scaler.transform(features)).float()
        out = model(x)
        return scaler.inverse_transform(out.numpy())


class Affine:
    def __init__(self, factor):
        self.factor = factor

    def scale(self, x):
        return x * self.factor

    def step(self, n):
        self.factor *= n

    def update(self):
        self.factor = 1.0


@torch.no_grad()
def evaluate(model, loader):
    scaler = Affine(2.0)
    total = 0.0
    for x, y in loader:
        total += scaler.scale(model(x)).sum().item()
        scaler.step(2)
        scaler.update()
    return total
