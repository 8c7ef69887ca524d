"""A project's task-loss weighter named like a scaler, built with ``.cuda()`` chained on its
constructor (the object is still the weighter, not a GradScaler): its ``scale``/``step``/
``update`` are no GradScaler calls (no AMP001, AMP015 or AMP201)."""
import torch

from weighting import TaskLossScaler


class OCRTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.task_scaler = TaskLossScaler(["ctc", "script"], warmup_steps=cfg["warmup"]).cuda()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
        self.amp_scaler = torch.amp.GradScaler("cuda")

    def train_step(self, images):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            losses = self.model(images)
            total = self.task_scaler.scale(losses)
        self.amp_scaler.scale(total).backward()
        self.amp_scaler.step(self.optimizer)
        self.amp_scaler.update()
        self.task_scaler.step()
        return total.item()

    @torch.inference_mode()
    def validate(self, loader):
        val = {"ctc": 0.0}
        for images in loader:
            val["ctc"] += self.model(images)["ctc"].item()
        self.task_scaler.update(val)
        return val
