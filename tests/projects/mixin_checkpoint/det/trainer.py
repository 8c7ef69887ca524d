import torch

from .persistence import ResumeMixin


class DetTrainer(ResumeMixin):
    def __init__(self, model, optimizer, work_dir):
        self.model = model
        self.optimizer = optimizer
        self.work_dir = work_dir
        self.iteration = 0
        self.scaler = torch.amp.GradScaler("cuda")

    def run(self, loader, max_iter):
        self.try_resume()
        for images, targets in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = sum(self.model(images, targets).values())
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.iteration += 1
            if self.iteration % 5000 == 0:
                self.save_state()
            if self.iteration >= max_iter:
                break
