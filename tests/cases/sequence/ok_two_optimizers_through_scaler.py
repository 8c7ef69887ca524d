import torch


def train(model, optimizer, head_optimizer, plain_net, plain_optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        for opt in (optimizer, head_optimizer):
            scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.step(head_optimizer)
        scaler.update()
        plain_net(x).mean().backward()
        plain_optimizer.step()
