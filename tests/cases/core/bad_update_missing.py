import torch


def train(model, optimizer, loader, epochs):
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # error: AMP001
