"""An optimizer and its scheduler kept side by side in nested dicts (VQ-Diffusion's solver): the
scheduler's ``step()`` is no optimizer step, though its container's sibling is stepped by the scaler."""
import torch


class Solver:
    def __init__(self, model, optimizer, scheduler):
        self.model = model
        self.scaler = torch.amp.GradScaler("cuda")
        self.optimizer_and_scheduler = {
            "model": {"optimizer": {"module": optimizer}, "scheduler": {"module": scheduler}},
        }

    def step(self, batch):
        for op_sc in self.optimizer_and_scheduler.values():
            op_sc["optimizer"]["module"].zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(batch)
            self.scaler.scale(loss).backward()
            self.scaler.step(op_sc["optimizer"]["module"])
            self.scaler.update()
            op_sc["scheduler"]["module"].step()  # error: AMP903
