"""Conditional fp16 conversions that do not meet an enabled GradScaler: the flag also disables the
scaler, or the conversion is for export after training."""
import torch


def train_correlated(args, loader):
    model = torch.nn.Linear(16, 1).cuda()
    if args.pure_fp16:
        model = model.half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=not args.pure_fp16)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=not args.pure_fp16):
            loss = (model(x) - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def train_then_export(args, loader):
    model = torch.nn.Linear(16, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = (model(x) - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    if args.export_fp16:
        model = model.half()
    torch.save(model.state_dict(), "model.pt")
