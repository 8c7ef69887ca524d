import torch


def optimize_dqn(policy_net, optimizer, scaler, batch, gamma=0.99):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = policy_net.td_loss(batch, gamma)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    for param in policy_net.parameters():
        param.grad.data.clamp_(-1, 1)
    scaler.step(optimizer)
    scaler.update()


def features(x):
    # clamping activations is not a gradient edit
    return x.clamp(min=0).clip(max=6)


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(features(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        if scaler.is_enabled():
            scaler.update()
