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
        aux_loss.backward()  # error: AMP009
        scaler.step(optimizer)
        scaler.update()


def train_regularizer_first(model, optimizer, loader, penalty):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        reg = penalty(model)
        reg.backward()  # error: AMP009
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
