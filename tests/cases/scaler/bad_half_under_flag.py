"""``.half()`` under a command-line flag on the model an unconditional GradScaler trains: with the
flag on, the first ``step`` raises ``ValueError: Attempting to unscale FP16 gradients``."""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", action="store_true")
    args = ap.parse_args()
    model = torch.nn.Linear(16, 1).cuda()
    if args.half:
        model = model.half()  # error: AMP014
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(100):
        x = torch.randn(8, 16, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
