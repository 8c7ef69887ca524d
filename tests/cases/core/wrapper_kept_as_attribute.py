import torch


class StepWrapper:
    def __init__(self, optimizer, scaler):
        self.optimizer = optimizer
        self.scaler = scaler

    def step(self):
        self.scaler.step(self.optimizer)  # error: AMP001


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.scaler = torch.amp.GradScaler("cuda")
        self.stepper = StepWrapper(optimizer, self.scaler)

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.stepper.step()
            self.scaler.update()

    def fit_without_update(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.stepper.step()


class Holder:
    # a class of this file built in a class body, before any method is known
    def __init__(self, inner):
        self.inner = inner


class Owner:
    holder = Holder(None)

    def __init__(self):
        self.other = Holder(self.holder)
