"""Per-task scalers looked up by name each pass; the update after the loop reaches only the last
task's scaler."""
import torch


def train(models, loader):
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-4) for k, m in models.items()}
    scalers = {k: torch.amp.GradScaler("cuda") for k in models}
    for batch in loader:
        for name in models:
            scaler = scalers[name]
            opt = opts[name]
            opt.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = models[name](batch[name]).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)  # error: AMP001
        scaler.update()
