import torch


def train(model, optimizer, loader, path):
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}, path)
