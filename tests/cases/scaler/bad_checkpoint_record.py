from dataclasses import asdict, dataclass
from typing import Any, Dict, NamedTuple

import torch


@dataclass
class Snapshot:
    model_state: Dict[str, Any]
    optimizer_state: Dict[str, Any]
    finished_epoch: int


class Checkpoint(NamedTuple):
    model: Dict[str, Any]
    optim: Dict[str, Any]


def upload(obj, dst):
    torch.save(obj, dst)


class Trainer:
    def __init__(self, model, optimizer, path, remote):
        self.model = model
        self.optimizer = optimizer
        self.path = path
        self.remote = remote
        self.scaler = torch.amp.GradScaler("cuda")

    def run_batch(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def save_snapshot(self, epoch):
        snapshot = Snapshot(
            model_state=self.model.state_dict(),
            optimizer_state=self.optimizer.state_dict(),
            finished_epoch=epoch,
        )
        snapshot = asdict(snapshot)
        if self.remote:
            upload(snapshot, self.remote)
        else:
            torch.save(snapshot, self.path)  # error: AMP013

    def save_tuple(self):
        torch.save(Checkpoint(self.model.state_dict(), self.optimizer.state_dict())._asdict(), self.path)  # error: AMP013
