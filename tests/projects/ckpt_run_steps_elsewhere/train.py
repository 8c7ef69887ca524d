"""The run builds the scaler (behind a precision flag) and hands it to the epoch function of
another module; its checkpoints keep the optimizer but not the scaler: a resumed run restarts
the loss scale at 65536 and skips steps until it has fallen again."""
import argparse
import os

import torch

from clipft.engine import train_one_epoch


def main(model, loader, args):
    device = torch.device("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda") if args.precision == "amp" else None
    start = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"]
    for epoch in range(start, args.epochs):
        train_one_epoch(model, loader, optimizer, scaler, device)
        torch.save(  # error: AMP013
            {
                "epoch": epoch + 1,
                "state_dict": model.state_dict(),
                "optimizer": optimizer.state_dict(),
            },
            os.path.join(args.out, f"epoch{epoch + 1}.pt"),
        )


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--precision", default="amp")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--resume", default="")
    p.add_argument("--out", default="checkpoints")
    main(None, [], p.parse_args())
