"""A generic trainer calls a hook of the task it drives; the task's type is known only from an
annotation (a parameter, and a getter's annotated local). The base task's hook clips still-scaled
gradients."""
import torch


class Task(torch.nn.Module):
    grad_clip = 1.0

    def before_step(self):
        torch.nn.utils.clip_grad_value_(self.parameters(), self.grad_clip)  # error: AMP002


class Runner:
    def __init__(self, task, optimizer):
        self.task = task
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def unwrap(self):
        task: Task = getattr(self.task, "module", self.task)
        return task

    def step(self, batch):
        task = self.unwrap()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = task(batch)
        self.scaler.scale(loss).backward()
        task.before_step()
        self.scaler.step(self.optimizer)
        self.scaler.update()


def train_step(task: Task, optimizer, scaler, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = task(batch)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    task.before_step()
    scaler.step(optimizer)
    scaler.update()
