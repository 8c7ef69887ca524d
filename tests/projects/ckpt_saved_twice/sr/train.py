"""The checkpoint dict is bound to a name and handed twice to a helper of another module that only
saves it (the epoch file and `last.pt`): the second hand-over adds nothing, so the dict still
lacks the scaler's state."""
import torch

from .utils import save_checkpoint


def main(model, optimizer, loader, epochs, samples_dir, results_dir):
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        ckpt = {"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
        save_checkpoint(ckpt, f"epoch_{epoch + 1}.pth.tar", samples_dir, results_dir)  # error: AMP013
        save_checkpoint(ckpt, "last.pth.tar", samples_dir, results_dir)
