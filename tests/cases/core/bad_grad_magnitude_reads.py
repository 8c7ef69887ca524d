import torch


def train(model, optimizer, loader, scaler: torch.amp.GradScaler, log):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        # element tests do not depend on the scale: not reported
        nonfinite = sum(p.grad.isnan().sum() for p in model.parameters() if p.grad is not None)
        # magnitudes do: each is the scale times too large
        gnorm = torch.sqrt(sum(p.grad.detach().float().pow(2).sum() for p in model.parameters()))  # error: AMP002
        peak = max(p.grad.abs().max() for p in model.parameters())  # error: AMP002
        total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])  # error: AMP002
        scaler.unscale_(optimizer)
        true_norm = sum(p.grad.pow(2).sum() for p in model.parameters()) ** 0.5
        scaler.step(optimizer)
        scaler.update()
        log(nonfinite, gnorm, peak, total, true_norm)
