"""The same precision table with a GradScaler enabled for "fp16": the float16 loss is scaled."""
import torch


def train_scaled(model, optimizer, loader, args):
    scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
    for x, y in loader:
        optimizer.zero_grad()
        with {"bf16": torch.autocast("cuda", dtype=torch.bfloat16),
              "fp16": torch.autocast("cuda", dtype=torch.float16)}[args.precision]:
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
