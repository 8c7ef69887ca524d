import torch


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()  # noqa: E501, AMP105  # error: AMP900
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: AMP002  # error: AMP900
        scaler.step(optimizer)  # noqa
        scaler.update()  # noqa: E501
