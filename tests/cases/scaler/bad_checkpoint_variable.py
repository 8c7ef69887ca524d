import torch
import torch.nn.functional as F


def train(model, optimizer, scheduler, loader, epochs, out_dir, best):
    scaler = torch.amp.GradScaler("cuda", enabled=True)
    ckpt = torch.load(out_dir / "pretrained.pt")  # a loaded checkpoint: another binding
    model.load_state_dict(ckpt["model"])
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        ckpt = {
            "epoch": epoch,
            "model": model.state_dict(),
        }
        ckpt["optimizer"] = optimizer.state_dict()
        ckpt["scheduler"] = scheduler.state_dict()
        torch.save(ckpt, out_dir / "last.pt")  # error: AMP013
        if best:
            torch.save(ckpt, out_dir / "best.pt")
        del ckpt
