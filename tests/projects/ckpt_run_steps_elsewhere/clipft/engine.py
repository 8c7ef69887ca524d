"""One epoch of contrastive fine-tuning: the scaler it is handed scales, steps and updates."""
import torch


def train_one_epoch(model, loader, optimizer, scaler, device):
    model.train()
    steps = 0
    for images, texts in loader:
        images, texts = images.to(device), texts.to(device)
        optimizer.zero_grad(set_to_none=True)
        if scaler is not None:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(images, texts)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = model(images, texts)
            loss.backward()
            optimizer.step()
        steps += 1
    return steps
