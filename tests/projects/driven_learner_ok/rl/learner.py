"""A learner class that owns its GradScaler; the actor loop of another module calls `update()`
once per batch, which steps and updates the scaler every time (only the print is periodic)."""
import torch


class Learner:
    def __init__(self, model, log_interval=50, amp=True):
        self.model = model
        self.opt = torch.optim.RMSprop(model.parameters(), lr=6e-4)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp)
        self.log_interval = log_interval
        self.num_updates = 0

    def update(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch).mean()
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.opt)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 40.0)
        self.scaler.step(self.opt)
        self.scaler.update()
        self.num_updates += 1
        if self.num_updates % self.log_interval == 0:
            print(f"upd {self.num_updates} scale {self.scaler.get_scale():.0f}")
