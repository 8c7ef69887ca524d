"""The checkpoint dict is built here and saved by a helper of another module (a signature wrapped
one parameter per line, its closing parenthesis at column 0)."""
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
        save_checkpoint({"epoch": epoch + 1,  # error: AMP013
                         "state_dict": model.state_dict(),
                         "optimizer": optimizer.state_dict()},
                        f"epoch_{epoch + 1}.pth.tar",
                        samples_dir,
                        results_dir)
