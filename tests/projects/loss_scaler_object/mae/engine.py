import torch


def train_one_epoch(model, criterion, loader, optimizer, loss_scaler, accum_iter=1, max_norm=None):
    model.train()
    optimizer.zero_grad()
    for it, (samples, targets) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(samples), targets)
        loss = loss / accum_iter
        loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters(),
                    update_grad=(it + 1) % accum_iter == 0)
        if (it + 1) % accum_iter == 0:
            optimizer.zero_grad()
