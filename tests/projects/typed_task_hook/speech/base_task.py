import torch


class BaseTask(torch.nn.Module):
    def __init__(self, clip_norm=1.0):
        super().__init__()
        self.clip_norm = clip_norm

    def training_step(self, batch):
        raise NotImplementedError

    def on_before_optimization(self, opt_idx):
        if self.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.parameters(), self.clip_norm)  # error: AMP002
