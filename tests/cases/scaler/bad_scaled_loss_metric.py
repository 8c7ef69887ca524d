import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def train_inline(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        running += scaler.scale(loss).item()  # error: AMP015
        print(float(scaler.scale(loss)))  # error: AMP015
    return running


def train_rebound(model, optimizer, loader, writer):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        loss = scaler.scale(loss)
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
        writer.add_scalar("train/loss", loss.item(), step)  # error: AMP015
        logger.info(f"step {step}: loss {loss:.4f}")  # the same value: reported once, above


def train_named(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    history = []
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaled_loss = scaler.scale(loss)
        scaled_loss.backward()
        scaler.step(optimizer)
        scaler.update()
        history.append(scaled_loss.detach().cpu())  # error: AMP015
        total += scaled_loss.item()
    return history, total


def train_fstring(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(optimizer)
        scaler.update()
        logger.info(f"step {step}: loss {scaled:.4f}")  # error: AMP015


def train_meter(model, optimizer, loader, meter):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(optimizer)
        scaler.update()
        meter.update(scaled.item(), x.size(0))  # error: AMP015
