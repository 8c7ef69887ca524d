"""The scale is read only to be logged: nothing compares it, so the scheduler still advances on
skipped steps."""
import torch


def train(model, optimizer, loader, epochs, writer):
    scaler = torch.amp.GradScaler("cuda")
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=epochs * len(loader))
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()  # error: AMP903
        writer.add_scalar("amp/scale", scaler.get_scale(), epoch)
        print(f"epoch {epoch} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
