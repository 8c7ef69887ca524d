import torch
import torch.nn.functional as F
from torch import nn


def soft_dice(probs, target, smooth=1.0):
    inter = (probs * target).sum()
    return 1 - (2 * inter + smooth) / (probs.sum() + target.sum() + smooth)


class DiceBCELoss(nn.Module):
    def __init__(self, bce_weight=0.5):
        super().__init__()
        self.bce_weight = bce_weight

    def forward(self, logits, target):
        # the probabilities are fp16 under autocast: the BCE runs in fp32 with autocast off
        with torch.autocast("cuda", enabled=False):
            probs = torch.sigmoid(logits.float())
            bce = F.binary_cross_entropy(probs, target.float())
        return soft_dice(probs, target) + self.bce_weight * bce


def d_loss(real_logits, fake_logits):
    """On the discriminator's logits: safe under autocast."""
    real = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    fake = F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    return real + fake
