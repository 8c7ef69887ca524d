import torch


def train(model, optimizer, loader, use_amp):
    # a disabled scaler steps the optimizer directly: stepping through it is fine either way
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()


class Engine:
    def __init__(self, model, optimizer, fp16):
        self.model = model
        self.optimizer = optimizer
        self.fp16 = fp16
        self.scaler = torch.amp.GradScaler("cuda") if fp16 else None

    def backward(self, loss):
        if self.fp16:
            loss = self.scaler.scale(loss)
        loss.backward()

    def step(self):
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
                loss = self.model(x, y)
            self.backward(loss)
            self.step()


def train_helper(model, optimizer, loader, backward_fn):
    """The backward happens in code of another module that receives the scaler."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        backward_fn(loss, scaler)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


class Wrapper:
    """The loss is scaled by a helper method that returns it."""

    def __init__(self, model, optimizer, use_amp):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = use_amp
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def scale_loss(self, loss):
        return self.scaler.scale(loss) if self.use_amp else loss

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
                loss = self.model(x, y)
            loss = self.scale_loss(loss)
            loss.backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()


def train_bf16(model, optimizer, loader):
    """A scaler kept for the fp16 configuration and disabled here: its step is the optimizer's."""
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
