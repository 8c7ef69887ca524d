import torch


class GlobalNormClipper:
    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def __call__(self, model):
        return torch.nn.utils.clip_grad_norm_(model.parameters(), self.max_norm)  # error: AMP002
