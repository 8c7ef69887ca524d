import torch


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        print(total_norm)
