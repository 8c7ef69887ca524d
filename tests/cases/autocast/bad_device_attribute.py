import torch


class Trainer:
    def __init__(self, model):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.scaler = torch.amp.GradScaler(self.device.type)

    def loss(self, x, y):
        with torch.autocast(self.device, dtype=torch.float16):  # error: AMP102
            return self.model(x, y)

    def loss_ok(self, x, y):
        with torch.autocast(self.device.type, dtype=torch.float16):
            return self.model(x, y)


class Configured:
    def __init__(self, cfg):
        self.device = cfg.device  # a string or a torch.device: unknown

    def loss(self, model, x):
        with torch.autocast(self.device, dtype=torch.float16):
            return model(x)
