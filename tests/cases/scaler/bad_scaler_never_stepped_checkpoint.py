"""A scaler that only scales (the optimizer is stepped directly: AMP003) is never updated, so
its scale never moves: a checkpoint without its state loses nothing (no AMP013)."""
import torch


def train(model, optimizer, loader, out_path, iters):
    scaler = torch.cuda.amp.GradScaler(2**10)  # error: AMP101
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        optimizer.step()  # error: AMP003
        if step % 1000 == 0:
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
            torch.save(checkpoint, out_path)
        if step == iters:
            break
