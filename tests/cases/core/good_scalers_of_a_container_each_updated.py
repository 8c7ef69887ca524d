"""Scalers of a list or dict, each stepped in one loop and updated in another (under another
name), or updated in the same pass: every scaler gets its update."""
import torch


def ensemble(members, loader):
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in members]
    scalers = [torch.amp.GradScaler("cuda") for _ in members]
    for x in loader:
        for member, opt, scaler in zip(members, optimizers, scalers):
            opt.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = member(x).sum()
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(member.parameters(), 1.0)
            scaler.step(opt)
        for s in scalers:
            s.update()


def tasks(models, opts, loader):
    scalers = {k: torch.amp.GradScaler("cuda") for k in models}
    for x in loader:
        for name, scaler in scalers.items():
            opts[name].zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = models[name](x).sum()
            scaler.scale(loss).backward()
            scaler.step(opts[name])
        for scaler in scalers.values():
            scaler.update()


def gan(models, opts, loader):
    scalers = {k: torch.amp.GradScaler("cuda") for k in models}
    for x in loader:
        for name in ["G", "D"]:
            scaler = scalers[name]
            opts[name].zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = models[name](x).sum()
            scaler.scale(loss).backward()
            scaler.step(opts[name])
            scaler.update()
    torch.save({"scalers": {k: s.state_dict() for k, s in scalers.items()}}, "ck.pt")
