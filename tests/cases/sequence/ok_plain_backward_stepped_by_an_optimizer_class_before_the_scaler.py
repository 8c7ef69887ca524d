"""A sanity pass before training (icefall's ``scan_pessimistic_batches_for_oom``) back-propagates
unscaled and steps the optimizer, an object of the file's own optimizer class, before the
GradScaler exists: its ``step`` consumes those gradients, no later ``scaler.step`` does."""
import torch


class ScaledAdam(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


def scan_batches_for_oom(model, batches, optimizer):
    for batch in batches:
        optimizer.zero_grad()
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()


def train_one_epoch(model, loader, optimizer, scaler):
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def run(model, loader, batches, epochs):
    optimizer = ScaledAdam(model.parameters())
    scan_batches_for_oom(model, batches, optimizer)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        train_one_epoch(model, loader, optimizer, scaler)
