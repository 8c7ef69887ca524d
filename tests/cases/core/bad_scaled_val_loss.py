import torch


def validate(model, loader, scaler: torch.amp.GradScaler):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                val_loss = torch.nn.functional.cross_entropy(model(x), y)
            total += scaler.scale(val_loss).item()  # error: AMP015, AMP201
    return total / len(loader)


def test_loss(model, loader, scaler: torch.amp.GradScaler):
    with torch.inference_mode():
        losses = []
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            losses.append(float(scaler.scale(loss)))  # error: AMP015, AMP201
    return losses
