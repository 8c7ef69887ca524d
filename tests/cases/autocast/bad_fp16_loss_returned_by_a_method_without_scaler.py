"""A neural-operator style trainer: ``train_one_batch`` computes the loss under autocast with no
dtype (float16 on CUDA), on a device type kept in ``self.autocast_device_type``, and returns it;
``train_one_epoch`` back-propagates it with no GradScaler anywhere. The bf16 twin below is fine."""
import torch


class Trainer:
    def __init__(self, model, optimizer, device="cuda", mixed_precision=False):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        if isinstance(self.device, torch.device):
            self.autocast_device_type = self.device.type
        elif "cuda" in self.device:
            self.autocast_device_type = "cuda"
        else:
            self.autocast_device_type = "cpu"
        self.mixed_precision = mixed_precision

    def train_one_epoch(self, loader, training_loss):
        for idx, sample in enumerate(loader):
            loss = self.train_one_batch(idx, sample, training_loss)
            loss.backward()  # error: AMP106
            self.optimizer.step()
            self.optimizer.zero_grad()

    def train_one_batch(self, idx, sample, training_loss):
        if self.mixed_precision:
            with torch.autocast(device_type=self.autocast_device_type):
                out = self.model(**sample)
        else:
            out = self.model(**sample)
        loss = 0.0
        if self.mixed_precision:
            with torch.autocast(device_type=self.autocast_device_type):
                loss += training_loss(out, **sample)
        else:
            loss += training_loss(out, **sample)
        return loss


class Bf16Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_one_epoch(self, loader):
        for batch in loader:
            loss = self.compute_loss(batch)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

    def compute_loss(self, batch):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return self.model(batch).mean()
