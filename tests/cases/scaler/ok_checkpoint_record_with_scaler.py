from dataclasses import asdict, dataclass, field
from typing import Any, Dict

import torch


@dataclass
class Snapshot:
    model_state: Dict[str, Any]
    optimizer_state: Dict[str, Any]
    finished_epoch: int
    scaler_state: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunInfo:
    finished_epoch: int
    best_loss: float


class Trainer:
    def __init__(self, model, optimizer, path):
        self.model = model
        self.optimizer = optimizer
        self.path = path
        self.scaler = torch.amp.GradScaler("cuda")

    def run_batch(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def save_snapshot(self, epoch):
        snapshot = Snapshot(self.model.state_dict(), self.optimizer.state_dict(), epoch, self.scaler.state_dict())
        torch.save(asdict(snapshot), self.path)

    def save_info(self, epoch, best):
        torch.save(asdict(RunInfo(epoch, best)), self.path.with_suffix(".info"))
