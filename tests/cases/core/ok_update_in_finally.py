import logging

import torch

log = logging.getLogger(__name__)


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        try:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            if step % 100 == 0:
                log.info("step %d loss %.4f", step, loss.item())
                continue
        finally:
            scaler.update()
