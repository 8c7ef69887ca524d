"""A module-level GradScaler nobody uses, and a loop whose fp16 autocast loss is back-propagated
unscaled (Medical-SAM2 style: the scaler was made for this backward and forgotten)."""
import torch

criterion = torch.nn.BCEWithLogitsLoss()
scaler = torch.amp.GradScaler("cuda")


def train_sam(net, optimizer, loader, frames):
    net.train()
    for pack in loader:
        loss = 0
        with torch.autocast("cuda", dtype=torch.float16):
            for fid in frames:
                pred = net(pack["image"][fid])
                loss += criterion(pred, pack["mask"][fid])
        loss = loss / len(frames)
        loss.backward()  # error: AMP004
        optimizer.step()
        optimizer.zero_grad()
