import torch

from tts import Engine, GradClipCallback, LossLogger


def main(model, loader, epochs=10):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    engine = Engine(model, optimizer, loader, callbacks=[GradClipCallback(1.0), LossLogger()])
    engine.fit(epochs)
