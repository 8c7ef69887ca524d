import torch


def validate(model, loader, scaler: torch.amp.GradScaler):
    model.eval()
    total, worst = 0.0, 0.0
    with torch.no_grad():
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            total += loss.item()
            worst = max(worst, float(loss))
    return total / len(loader), worst
