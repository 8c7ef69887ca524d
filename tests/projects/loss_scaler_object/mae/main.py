import torch

from .engine import train_one_epoch
from .util.misc import NativeScalerWithGradNormCount as NativeScaler


def main(args, model, criterion, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_scaler = NativeScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, loader, optimizer, loss_scaler, accum_iter=args.accum_iter,
                        max_norm=args.clip_grad)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scaler": loss_scaler.state_dict(), "epoch": epoch}, f"checkpoint-{epoch}.pth")
