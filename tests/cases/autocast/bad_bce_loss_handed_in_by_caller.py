"""A BCELoss instance built in `main()` and handed to the phase functions as `criterion`: the
fine-tuning phase calls it under fp16 autocast (the warm-up phase calls it outside autocast on
float probabilities, which is fine)."""
import torch
import torch.nn as nn


def warmup(model, loader, criterion, optimizer):
    for x, y in loader:
        probs = model(x)
        loss = criterion(probs.float(), y)
        loss.backward()
        optimizer.step()


def finetune(model, loader, criterion, optimizer, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            probs = model(x)
            loss = criterion(probs, y)  # error: AMP103
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(model, loader):
    criterion = nn.BCELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    warmup(model, loader, criterion, optimizer)
    finetune(model, loader, criterion, optimizer, torch.amp.GradScaler("cuda"))


def other(model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    finetune_logits(model, loader, nn.BCEWithLogitsLoss(), optimizer, torch.amp.GradScaler("cuda"))


def finetune_logits(model, loader, criterion, optimizer, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
