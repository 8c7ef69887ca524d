import torch


def train(model, optimizer, loader, use_amp: bool, clip=1.0):
    scaler = torch.amp.GradScaler("cuda") if use_amp else None
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()


def train_flag(model, optimizer, loader, args):
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    for x, y in loader:
        with torch.autocast("cuda", enabled=args.amp):
            loss = model(x, y)
        if args.amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if args.amp:
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if args.amp:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad()
