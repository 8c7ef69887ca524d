import torch


def train(model, optimizer, loader, aux_weight=0.1):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            out, aux_out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            aux_loss = aux_weight * torch.nn.functional.cross_entropy(aux_out, y)
        scaler.scale(loss).backward(retain_graph=True)
        scaler.scale(aux_loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_summed(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            out, aux_out = model(x)
            total = torch.nn.functional.cross_entropy(out, y) + 0.1 * aux_out.pow(2).mean()
        scaled = scaler.scale(total)
        scaled.backward()
        scaler.step(optimizer)
        scaler.update()


def train_with_probe(model, probe, optimizer, probe_optimizer, loader):
    """A linear probe trained in fp32 on detached features, with its own optimizer."""
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            feats, out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
        scaler.scale(loss).backward()
        probe_optimizer.zero_grad()
        probe_loss = torch.nn.functional.cross_entropy(probe(feats.detach().float()), y)
        probe_loss.backward()
        probe_optimizer.step()
        scaler.step(optimizer)
        scaler.update()
