"""torchvision's detection reference: the checkpoint dict goes through `utils.save_on_master(*args,
**kwargs)`, which passes its arguments on to `torch.save`."""
import torch

from . import utils


def main(model, optimizer, loader, epochs, output_dir):
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1}
        utils.save_on_master(checkpoint, f"{output_dir}/model_{epoch + 1}.pth")  # error: AMP013
        utils.save_on_master(checkpoint, f"{output_dir}/checkpoint.pth")
