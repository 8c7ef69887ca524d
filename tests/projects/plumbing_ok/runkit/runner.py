from .engine import Engine


class Runner:
    def __init__(self, model, optimizer, scaler):
        self.engine = Engine(model, optimizer, scaler)

    def fit(self, loader):
        for x, y in loader:
            self.engine.step(x, y)
