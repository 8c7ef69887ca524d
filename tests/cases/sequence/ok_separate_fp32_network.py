import torch


def train(model, critic, optimizer, critic_optimizer, loader):
    """The policy trains under AMP; a small fp32 critic trains without it in the same loop."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        critic_optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            loss = torch.nn.functional.mse_loss(out, y)
        scaler.scale(loss).backward()
        critic_loss = torch.nn.functional.mse_loss(critic(x.float()), y.float())
        critic_loss.backward()
        critic_optimizer.step()
        scaler.step(optimizer)
        scaler.update()


class AmpOptimizer:
    """Steps its optimizer through the scaler it was given."""

    def __init__(self, optimizer, scaler):
        self.optimizer = optimizer
        self.scaler = scaler

    def step(self):
        self.scaler.step(self.optimizer)


def train_wrapped(model, base_optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    optimizer = AmpOptimizer(base_optimizer, scaler)
    for x, y in loader:
        base_optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        optimizer.step()
        scaler.update()
