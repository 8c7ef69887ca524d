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
        probs = torch.sigmoid(logits)
        return soft_dice(probs, target) + self.bce_weight * F.binary_cross_entropy(probs, target)


class CombinedLoss(nn.Module):
    """Segmentation plus an auxiliary edge term, both dice + BCE."""

    def __init__(self, edge_weight=0.2):
        super().__init__()
        self.seg_term = DiceBCELoss()
        self.edge_term = DiceBCELoss(bce_weight=1.0)
        self.edge_weight = edge_weight

    def forward(self, seg_logits, edge_logits, masks, edges):
        return self.seg_term(seg_logits, masks) + self.edge_weight * self.edge_term(edge_logits, edges)


def d_loss(real_prob, fake_prob):
    """A discriminator with a sigmoid last layer: probabilities in, BCE on them."""
    real = F.binary_cross_entropy(real_prob, torch.ones_like(real_prob))  # error: AMP103
    fake = F.binary_cross_entropy(fake_prob, torch.zeros_like(fake_prob))  # error: AMP103
    return real + fake
