import torch
from torch.amp import GradScaler, autocast


class Trainer:
    def __init__(self, task_cls, optimizers):
        self.task = None
        self.task_cls = task_cls
        self.optimizers = optimizers
        self.scaler = GradScaler("cuda")

    def get_task_ref(self):
        from speech.base_task import BaseTask

        task: BaseTask = self.task.module if hasattr(self.task, "module") else self.task
        return task

    def fit(self, loader):
        self.task = self.task_cls()
        for batch in loader:
            self.run_batch(batch)

    def run_batch(self, batch):
        task_ref = self.get_task_ref()
        for opt_idx, optimizer in enumerate(self.optimizers):
            with autocast("cuda", dtype=torch.float16):
                loss = task_ref.training_step(batch)
            self.scaler.scale(loss).backward()
            if optimizer is not None:
                self.scaler.unscale_(optimizer)
                task_ref.on_before_optimization(opt_idx)
                self.scaler.step(optimizer)
                self.scaler.update()
                optimizer.zero_grad()
