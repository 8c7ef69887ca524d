import torch
import torch.nn.functional as F

from mylib.checkpoint import save_checkpoint


def train(model, optimizer, loader, epochs):
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        save_checkpoint(model, optimizer, scaler, epoch)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
