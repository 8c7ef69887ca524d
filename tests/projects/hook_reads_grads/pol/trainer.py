import torch
import torch.nn.functional as F

from .mixins import GradNormLoggingMixin


class PolicyTrainer(GradNormLoggingMixin):
    def __init__(self, policy, optimizer, scaler: torch.amp.GradScaler, accum=1):
        self.policy = policy
        self.optimizer = optimizer
        self.scaler = scaler
        self.accum = accum
        self.global_step = 0

    def train_epoch(self, loader):
        for i, (obs, action) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.mse_loss(self.policy(obs).float(), action)
            self.scaler.scale(loss / self.accum).backward()
            self.on_after_backward()
            if (i + 1) % self.accum == 0:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 1.0)
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
