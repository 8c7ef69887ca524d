import torch

# lazy initialisation on the first iteration: one scaler for the whole run


def train(model, optimizer, loader):
    scaler = None
    for x, y in loader:
        if scaler is None:
            scaler = torch.amp.GradScaler("cuda")
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


class Learner:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = None

    def training_step(self, batch):
        if self.scaler is None:
            self.scaler = torch.amp.GradScaler("cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(*batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def fit(self, loader):
        for batch in loader:
            self.training_step(batch)

    def fit2(self, loader):
        for batch in loader:
            if not hasattr(self, "grad_scaler"):
                self.grad_scaler = torch.amp.GradScaler("cuda")
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(*batch)
            self.grad_scaler.scale(loss).backward()
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()
