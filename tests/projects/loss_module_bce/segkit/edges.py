import torch

from .losses import CombinedLoss


def train_epoch(model, loader, optimizer, scaler):
    criterion = CombinedLoss(edge_weight=0.5)
    for images, masks, edges in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            seg_logits, edge_logits = model(images)
            loss = criterion(seg_logits, edge_logits, masks, edges)  # error: AMP103
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
