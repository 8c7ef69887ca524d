import torch
import torch.nn.functional as F


def fit_epoch(net, optimizer, batches, scaler):
    net.train()
    for images, masks in batches:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = F.cross_entropy(net(images), masks)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
