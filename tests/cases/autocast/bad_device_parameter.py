import torch


def train_one_epoch(model, optimizer, scaler, loader, device):
    for x, y in loader:
        with torch.autocast(device, dtype=torch.float16):  # error: AMP102
            loss = model(x.to(device), y.to(device))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


class Runner:
    def __init__(self, model):
        self.model = model

    def evaluate(self, x, device):
        with torch.autocast(device_type=device, dtype=torch.float16):  # error: AMP102
            return self.model(x)

    def run(self, x):
        return self.evaluate(x, torch.device("cuda"))


def main(model, optimizer, loader):
    device = torch.device("cuda")
    scaler = torch.amp.GradScaler("cuda")
    train_one_epoch(model, optimizer, scaler, loader, device)
